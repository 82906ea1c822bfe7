//! Writing a pipeline stage once: a [`PipelineStage`] says what the stage does with a call and
//! the rest of the stack ([`Next`]); [`StageService`] turns it into the tower service every
//! stage is, and [`StageLayer`] into its layer.
//!
//! ```
//! use tool_core::stage::{Next, OutcomeFuture, PipelineStage, StageLayer};
//! use tool_core::ToolInvocation;
//!
//! /// Logs each call's tool, then lets it through.
//! #[derive(Clone, Debug)]
//! struct LogCalls;
//!
//! impl PipelineStage for LogCalls {
//!     fn run(self, inv: ToolInvocation, next: Next) -> OutcomeFuture {
//!         Box::pin(async move {
//!             eprintln!("calling {}", inv.tool_name());
//!             next.run(inv).await
//!         })
//!     }
//! }
//!
//! let layer = StageLayer::new(LogCalls);
//! # let _ = layer;
//! ```

use std::fmt;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use tower_layer::Layer;
use tower_service::Service;

use crate::{Error, ToolInvocation, ToolOutcome};

/// The future every stage returns.
pub type OutcomeFuture = BoxFuture<'static, Result<ToolOutcome, Error>>;

/// The rest of the stack below a stage, ready to take one call.
pub struct Next {
    call: Box<dyn FnOnce(ToolInvocation) -> OutcomeFuture + Send>,
}

impl Next {
    /// Pass the call on to the rest of the stack.
    pub fn run(self, inv: ToolInvocation) -> OutcomeFuture {
        (self.call)(inv)
    }
}

impl fmt::Debug for Next {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Next(..)")
    }
}

/// What one stage of the pipeline does with a call: answer it itself (a refusal), or pass it
/// on with [`Next::run`] and look at or change what comes back. A stage is cloned for each
/// call, so keep what it holds cheap to clone (`Arc`s).
pub trait PipelineStage: Clone + Send + Sync + 'static {
    /// Handle one call.
    fn run(self, inv: ToolInvocation, next: Next) -> OutcomeFuture;
}

/// The tower service of a [`PipelineStage`] around the rest of the stack `S`.
#[derive(Clone, Debug)]
pub struct StageService<P, S> {
    stage: P,
    inner: S,
}

impl<P, S> StageService<P, S> {
    /// `stage` around `inner`.
    pub fn new(stage: P, inner: S) -> Self {
        Self { stage, inner }
    }

    /// The stage.
    pub fn stage(&self) -> &P {
        &self.stage
    }
}

impl<P, S> Service<ToolInvocation> for StageService<P, S>
where
    P: PipelineStage,
    S: Service<ToolInvocation, Response = ToolOutcome, Error = Error> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = ToolOutcome;
    type Error = Error;
    type Future = OutcomeFuture;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, inv: ToolInvocation) -> OutcomeFuture {
        // Tower's contract: the instance `poll_ready` found ready is the one to call, and a
        // clone need not be ready. So the ready one goes with this call and its clone stays
        // behind for the next `poll_ready`. Every stage needs this; it is written only here.
        let clone = self.inner.clone();
        let mut ready = std::mem::replace(&mut self.inner, clone);
        let next = Next {
            call: Box::new(move |inv| Box::pin(ready.call(inv))),
        };
        let stage = std::any::type_name::<P>();
        let stage = stage.rsplit("::").next().unwrap_or(stage);
        let span = tracing::debug_span!("stage", stage);
        Box::pin(tracing::Instrument::instrument(
            self.stage.clone().run(inv, next),
            span,
        ))
    }
}

/// The tower layer of a [`PipelineStage`].
#[derive(Clone, Debug)]
pub struct StageLayer<P> {
    stage: P,
}

impl<P> StageLayer<P> {
    /// The layer adding `stage`.
    pub fn new(stage: P) -> Self {
        Self { stage }
    }
}

impl<P: Clone, S> Layer<S> for StageLayer<P> {
    type Service = StageService<P, S>;

    fn layer(&self, inner: S) -> Self::Service {
        StageService::new(self.stage.clone(), inner)
    }
}
