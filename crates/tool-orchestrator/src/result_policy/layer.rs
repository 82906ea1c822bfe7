use tower_layer::Layer;

use super::ResultPolicy;

/// Applies the result-size policy to calls that ran.
#[derive(Clone, Copy, Debug, Default)]
pub struct ResultPolicyLayer;

impl<S> Layer<S> for ResultPolicyLayer {
    type Service = ResultPolicy<S>;

    fn layer(&self, inner: S) -> Self::Service {
        ResultPolicy { inner }
    }
}
