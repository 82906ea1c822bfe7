use tower_layer::Layer;

use super::Validate;

/// Runs the tool's `validate_input`.
#[derive(Clone, Copy, Debug, Default)]
pub struct ValidateLayer;

impl<S> Layer<S> for ValidateLayer {
    type Service = Validate<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Validate { inner }
    }
}
