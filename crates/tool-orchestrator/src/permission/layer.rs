use std::sync::Arc;

use tool_core::{Approver, PermissionPolicy};
use tower_layer::Layer;

use super::Permission;

/// Decides allow / ask / deny for each call.
#[derive(Clone)]
pub struct PermissionLayer {
    policy: Arc<dyn PermissionPolicy>,
    approver: Option<Arc<dyn Approver>>,
}

impl PermissionLayer {
    /// A layer asking `policy`, and `approver` for asks (none: asks are refused).
    pub fn new(policy: Arc<dyn PermissionPolicy>, approver: Option<Arc<dyn Approver>>) -> Self {
        Self { policy, approver }
    }
}

impl std::fmt::Debug for PermissionLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PermissionLayer")
            .field("approver", &self.approver.is_some())
            .finish_non_exhaustive()
    }
}

impl<S> Layer<S> for PermissionLayer {
    type Service = Permission<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Permission {
            inner,
            policy: self.policy.clone(),
            approver: self.approver.clone(),
        }
    }
}
