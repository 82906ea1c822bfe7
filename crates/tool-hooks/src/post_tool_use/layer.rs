use std::sync::Arc;

use tower_layer::Layer;

use super::PostToolUse;
use crate::hooks::Hooks;

/// Runs PostToolUse and PostToolUseFailure hooks after the inner service (the tool call).
#[derive(Clone, Debug, Default)]
pub struct PostToolUseLayer {
    hooks: Arc<Hooks>,
}

impl PostToolUseLayer {
    /// A layer running `hooks`.
    pub fn new(hooks: Arc<Hooks>) -> Self {
        Self { hooks }
    }
}

impl<S> Layer<S> for PostToolUseLayer {
    type Service = PostToolUse<S>;

    fn layer(&self, inner: S) -> Self::Service {
        PostToolUse::new(inner, self.hooks.clone())
    }
}
