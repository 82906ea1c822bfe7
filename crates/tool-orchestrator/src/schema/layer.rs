use tower_layer::Layer;

use super::Schema;

/// Checks the input against the tool's schema.
#[derive(Clone, Copy, Debug, Default)]
pub struct SchemaLayer;

impl<S> Layer<S> for SchemaLayer {
    type Service = Schema<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Schema { inner }
    }
}
