//! The tool registry: tools by name and alias, each with its schema compiled once.

use std::collections::HashMap;
use std::sync::Arc;

use crate::Error;
use crate::schema::CompiledSchema;
use crate::texts;
use crate::tool::Tool;
use crate::wire::ToolDefinition;

/// A registered tool and its compiled input schema.
pub struct RegisteredTool {
    /// The tool.
    pub tool: Arc<dyn Tool>,
    /// Its compiled schema.
    pub schema: CompiledSchema,
    name: String,
}

impl RegisteredTool {
    /// The canonical name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl std::fmt::Debug for RegisteredTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegisteredTool")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// How a name resolved.
#[derive(Debug, Clone)]
pub enum Lookup {
    /// Found (by name, alias or deprecated alias).
    Found(Arc<RegisteredTool>),
    /// Not found; the text is the model-facing error (already wrapped).
    NotFound(String),
}

/// All known tools. Which of them are offered to the model is decided per session (the
/// `offered` predicate of [`ToolRegistry::lookup`]).
#[derive(Debug, Default, Clone)]
pub struct ToolRegistry {
    tools: Vec<Arc<RegisteredTool>>,
    by_name: HashMap<String, usize>,
    by_alias: HashMap<String, usize>,
    by_deprecated: HashMap<String, usize>,
    /// Tools the agent has that this registry does not run: not offered here, so a call of
    /// one gets the not-offered text rather than the unknown-tool one.
    known_elsewhere: std::collections::BTreeSet<String>,
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Register a tool, compiling its schema. Fails when its name or an alias is already
    /// taken, or its schema does not compile.
    pub fn register(&mut self, tool: Arc<dyn Tool>) -> Result<(), Error> {
        let name = tool.name().to_owned();
        let aliases = tool.aliases();
        let deprecated = tool.deprecated_aliases();
        for n in std::iter::once(&name).chain(&aliases).chain(&deprecated) {
            if self.by_name.contains_key(n)
                || self.by_alias.contains_key(n)
                || self.by_deprecated.contains_key(n)
            {
                return Err(Error::DuplicateTool(n.clone()));
            }
        }
        let schema = CompiledSchema::compile(tool.input_schema()).map_err(|e| match e {
            Error::InvalidSchema(m) => Error::InvalidToolSchema {
                tool: name.clone(),
                message: m,
            },
            other => other,
        })?;
        let idx = self.tools.len();
        self.tools.push(Arc::new(RegisteredTool {
            tool,
            schema,
            name: name.clone(),
        }));
        self.by_name.insert(name, idx);
        for a in aliases {
            self.by_alias.insert(a, idx);
        }
        for a in deprecated {
            self.by_deprecated.insert(a, idx);
        }
        Ok(())
    }

    /// Builder-style [`register`](Self::register).
    pub fn with(mut self, tool: Arc<dyn Tool>) -> Result<Self, Error> {
        self.register(tool)?;
        Ok(self)
    }

    /// Name tools the agent has but this registry does not run (a call of one is answered
    /// as a call of a tool not offered in this session).
    pub fn know_names<I, S>(&mut self, names: I)
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.known_elsewhere
            .extend(names.into_iter().map(Into::into));
    }

    /// Every registered tool, in registration order.
    pub fn tools(&self) -> impl Iterator<Item = &Arc<RegisteredTool>> {
        self.tools.iter()
    }

    /// The tool registered under canonical name `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<RegisteredTool>> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    /// Resolve a name as Claude Code does: among the offered tools by name or alias; then
    /// among all tools by deprecated alias; otherwise the model-facing error, which says when
    /// the tool exists but is not offered and when only the case was wrong.
    pub fn lookup(&self, name: &str, offered: &dyn Fn(&str) -> bool) -> Lookup {
        if let Some(&i) = self.by_name.get(name).or_else(|| self.by_alias.get(name))
            && offered(self.tools[i].name())
        {
            return Lookup::Found(self.tools[i].clone());
        }
        if let Some(&i) = self.by_deprecated.get(name) {
            return Lookup::Found(self.tools[i].clone());
        }
        if self.by_name.contains_key(name)
            || self.by_alias.contains_key(name)
            || self.known_elsewhere.contains(name)
        {
            return Lookup::NotFound(texts::tool_disabled(name));
        }
        if let Some(t) = self
            .tools
            .iter()
            .find(|t| offered(t.name()) && t.name().eq_ignore_ascii_case(name))
        {
            return Lookup::NotFound(texts::tool_name_case(name, t.name()));
        }
        Lookup::NotFound(texts::no_such_tool(name))
    }

    /// The API `tools` list for the offered tools, in registration order.
    pub fn definitions(&self, offered: &dyn Fn(&str) -> bool) -> Vec<ToolDefinition> {
        self.tools
            .iter()
            .filter(|t| offered(t.name()))
            .map(|t| ToolDefinition {
                name: t.name().to_owned(),
                description: t.tool.description(),
                input_schema: t.schema.schema().clone(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::ToolContext;
    use crate::tool::{ToolCallError, ToolOutput};
    use async_trait::async_trait;
    use serde_json::{Value, json};

    struct T(&'static str, Vec<String>, Vec<String>);

    #[async_trait]
    impl Tool for T {
        fn name(&self) -> &str {
            self.0
        }
        fn aliases(&self) -> Vec<String> {
            self.1.clone()
        }
        fn deprecated_aliases(&self) -> Vec<String> {
            self.2.clone()
        }
        fn description(&self) -> String {
            "test".into()
        }
        fn input_schema(&self) -> Value {
            json!({"type": "object"})
        }
        async fn call(&self, _: Value, _: &ToolContext) -> Result<ToolOutput, ToolCallError> {
            Ok(ToolOutput::default())
        }
    }

    fn reg() -> ToolRegistry {
        ToolRegistry::new()
            .with(Arc::new(T("TaskStop", vec![], vec!["KillShell".into()])))
            .unwrap()
            .with(Arc::new(T("Read", vec!["ReadFile".into()], vec![])))
            .unwrap()
    }

    fn found(l: Lookup) -> String {
        match l {
            Lookup::Found(t) => t.name().to_owned(),
            Lookup::NotFound(m) => m,
        }
    }

    #[test]
    fn lookup_by_name_alias_and_deprecated_alias() {
        let r = reg();
        let all = |_: &str| true;
        assert_eq!(found(r.lookup("Read", &all)), "Read");
        assert_eq!(found(r.lookup("ReadFile", &all)), "Read");
        let only_read = |n: &str| n == "Read";
        assert_eq!(
            found(r.lookup("KillShell", &only_read)),
            "TaskStop",
            "deprecated aliases resolve even when not offered"
        );
        assert_eq!(
            found(r.lookup("TaskStop", &only_read)),
            texts::tool_disabled("TaskStop")
        );
        assert_eq!(
            found(r.lookup("read", &all)),
            texts::tool_name_case("read", "Read")
        );
        assert_eq!(
            found(r.lookup("Nope", &all)),
            "<tool_use_error>Error: No such tool available: Nope</tool_use_error>"
        );
    }

    #[test]
    fn names_known_elsewhere_are_not_offered_rather_than_unknown() {
        let mut r = reg();
        r.know_names(["WebFetch"]);
        let all = |_: &str| true;
        assert_eq!(
            found(r.lookup("WebFetch", &all)),
            texts::tool_disabled("WebFetch")
        );
        assert_eq!(
            found(r.lookup("WebFetchX", &all)),
            texts::no_such_tool("WebFetchX")
        );
    }

    #[test]
    fn duplicates_are_rejected() {
        let r = reg();
        assert!(
            matches!(r.clone().with(Arc::new(T("Read", vec![], vec![]))), Err(Error::DuplicateTool(n)) if n == "Read")
        );
        assert!(
            matches!(r.with(Arc::new(T("Other", vec!["KillShell".into()], vec![]))), Err(Error::DuplicateTool(n)) if n == "KillShell")
        );
    }

    #[test]
    fn definitions_follow_the_offered_set() {
        let r = reg();
        let defs = r.definitions(&|n: &str| n == "Read");
        assert_eq!(defs.len(), 1);
        assert_eq!(
            serde_json::to_value(&defs[0]).unwrap(),
            json!({"name": "Read", "description": "test", "input_schema": {"type": "object"}})
        );
    }
}
