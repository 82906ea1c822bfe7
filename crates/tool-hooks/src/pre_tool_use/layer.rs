use std::sync::Arc;

use tower_layer::Layer;

use super::PreToolUse;
use crate::hooks::Hooks;

/// Runs PreToolUse hooks before the inner service (the permission stage).
#[derive(Clone, Debug, Default)]
pub struct PreToolUseLayer {
    hooks: Arc<Hooks>,
}

impl PreToolUseLayer {
    /// A layer running `hooks`.
    pub fn new(hooks: Arc<Hooks>) -> Self {
        Self { hooks }
    }
}

impl<S> Layer<S> for PreToolUseLayer {
    type Service = PreToolUse<S>;

    fn layer(&self, inner: S) -> Self::Service {
        PreToolUse::new(inner, self.hooks.clone())
    }
}
