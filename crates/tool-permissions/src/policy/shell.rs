//! The Bash part of a decision: a command line analysed once, matched unit by unit.

use std::path::{Path, PathBuf};

use tool_core::{Decision, DecisionReason, PermissionMode, PermissionRequest, RuleList};

use super::Policy;
use super::entry::{PathFamily, RuleEntry, RuleMatcher};

impl Policy {
    /// The first `list` Bash rule matching one of `forms`.
    pub(super) fn shell_match(&self, list: RuleList, forms: &[String]) -> Option<&RuleEntry> {
        forms
            .iter()
            .filter_map(|form| {
                let word = form.split(' ').next().unwrap_or("");
                self.index
                    .shell_candidates(list, word)
                    .filter(|&i| matches!(&self.entries[i].matcher, RuleMatcher::Shell(p) if p.matches(form)))
                    .min()
            })
            .min()
            .map(|i| &self.entries[i])
    }

    /// Whether any deny or ask rule could apply to what a Bash line does: a Bash rule, a rule
    /// of the Read or Edit family (they reach the paths Bash touches), or a wildcard tool name.
    fn rules_reach_bash(&self) -> bool {
        self.entries.iter().any(|e| {
            e.list != RuleList::Allow
                && (e.rule.names_tool_by_pattern("Bash")
                    || crate::policy::PathFamily::of(&e.rule.tool).is_some())
        })
    }

    /// The allow Bash rules matching a unit's plain form exactly as written (no global options
    /// skipped, nothing stripped but inert wrappers), in the order they were written: the
    /// caller takes the first that also covers what the unit does (a rule for `npx` may not
    /// cover `npx jest`, where a later `Bash(npx jest:*)` does).
    pub(super) fn shell_allows(&self, form: &str) -> Vec<&RuleEntry> {
        let word = form.split(' ').next().unwrap_or("");
        let mut found: Vec<usize> = self
            .index
            .shell_candidates(RuleList::Allow, word)
            .filter(
                |&i| matches!(&self.entries[i].matcher, RuleMatcher::Shell(p) if p.matches(form)),
            )
            .collect();
        found.sort_unstable();
        found.dedup();
        found.into_iter().map(|i| &self.entries[i]).collect()
    }

    /// The analysis of a Bash line in this call's context.
    pub(crate) fn analyze_shell(
        command: &str,
        ctx: &tool_core::ToolContext,
    ) -> tool_shell::analyze::Analysis {
        tool_shell::analyze::analyze(
            command,
            &tool_shell::analyze::ShellEnv::new(ctx.cwd.clone(), ctx.home.clone()),
        )
    }

    /// The Bash-specific part of a decision: `Some` when the rules or the safety checks settle
    /// it, `None` to continue with the mode and whole-tool rules.
    ///
    /// The steps, in order (steps 2 and 6 of the decision, see [`Policy`]): (1) deny rules
    /// against the line and every unit it runs (carried commands and substitutions included);
    /// (2) deny rules against every path an effect reads or writes; (3) ask rules against the
    /// line and every unit; (4) a recursive search whose root holds a denied tree asks; (5) a
    /// line that does not parse asks; (6) a line over the budget ([`MAX_COMMAND_BYTES`],
    /// [`MAX_UNITS`]) or that cannot be analysed completely (unknown words, functions, raw
    /// CR/NUL) asks; (7) removals of the root, home or project (or of paths that cannot be
    /// known) ask in every mode; (8) for each write: a protected path asks, and a path outside
    /// the working directories that no Edit allow rule covers asks unless bypassed; (9) an
    /// allow needs every read inside the working directories or allowed, every path argument
    /// inside them or allowed, and every unit allowed.
    pub(super) fn decide_shell(
        &self,
        request: &PermissionRequest<'_>,
        command: &str,
        line: &ShellLine,
    ) -> Option<Decision> {
        let ctx = request.ctx;
        let (analysis, touched) = (&line.analysis, &line.touched);
        let denied = |e: &RuleEntry| {
            Decision::deny(
                format!(
                    "Permission to use Bash with command {} has been denied.",
                    self.denied_text(command, ctx)
                ),
                e.reason(),
            )
        };
        // (1)
        let forms = Self::shell_forms(command, analysis);
        if let Some(e) = self.shell_match(RuleList::Deny, &forms) {
            return Some(denied(e));
        }
        // (2)
        let find = |family: PathFamily, p: &Path| self.path_rule(RuleList::Deny, family, p, ctx);
        let names = |family: PathFamily| self.denied_names(family);
        if let Some((e, _)) = crate::shell_policy::denied_path(touched, &find, &names) {
            return Some(denied(e));
        }
        // (2c) A program that changes every file below a directory it writes (`chmod -R`,
        // `rm -r`, `mv`): a deny rule on anything below stands as on the directory itself.
        let trees = crate::shell_policy::tree_writes(analysis, touched);
        for root in &trees {
            let families = [PathFamily::Edit, PathFamily::Read];
            if let Some(e) = self.denied_below_of(&families, root, ctx, true, false) {
                return Some(denied(e));
            }
        }
        // (2a) A program the database does not know, or a word it could not place, may read or
        // write any path it is given, in whatever small language the program reads there.
        let unplaced = crate::shell_policy::unknown_programs_paths(analysis, ctx);
        let mut in_code = crate::shell_policy::code_paths(analysis, ctx);
        // And where they lead through links the line makes.
        let mut unplaced_through: Vec<PathBuf> = Vec::new();
        for p in &unplaced {
            unplaced_through.extend(touched.through_links(p, None, ctx));
        }
        for (p, w) in in_code.clone() {
            for t in touched.through_links(&p, None, ctx) {
                in_code.push((t, w));
            }
        }
        let unplaced_both = unplaced.iter().chain(&unplaced_through).map(|p| (p, true));
        for (p, writes) in unplaced_both.chain(in_code.iter().map(|(p, w)| (p, *w))) {
            let families: &[PathFamily] = if writes {
                &[PathFamily::Read, PathFamily::Edit]
            } else {
                &[PathFamily::Read]
            };
            for &family in families {
                if let Some(e) = find(family, p) {
                    return Some(denied(e));
                }
            }
        }
        // A program named by path in an option's or a setting's value runs as that program.
        if let Some(e) = self.shell_match(
            RuleList::Deny,
            &crate::shell_policy::programs_in_values(analysis),
        ) {
            return Some(denied(e));
        }
        // (2b) Code that cannot all be known (a command in a variable, an array, `set --`, an
        // alias, a trap, a string run as code): deny rules meet every word sequence of the
        // line, and of its quoted strings, that could run as a command.
        // (Also a program the database does not know, which may change what later names run
        // (`hash -p`), variables that are not inert, which programs may run (`PROMPT_COMMAND`),
        // a program run from a path the line writes, and code a program runs.)
        let uncertain = !analysis.parsed
            || !analysis.problems.is_empty()
            || analysis.units.iter().any(|u| {
                !u.certain
                    || !u.unknown.is_empty()
                    || (!u.is_bare() && u.interpretation.path.is_empty())
                    // The shell's own state (`hash -p`, `alias`, `set --`, `trap`, `enable`).
                    || u.interpretation.path.first().is_some_and(|p| p == "export")
                    || u
                        .assignments
                        .iter()
                        .any(|a| !tool_shell::inert_assignment(&a.name))
            })
            // A program run from a path the line writes is whatever was written there.
            || crate::shell_policy::runs_what_it_wrote(analysis, touched, ctx)
            // A word that pipes to a command where a program takes a file's name
            // (`strace -o '|cmd'`, sqlite3's `.output '|cmd'`, Perl's two-argument open).
            || analysis
                .units
                .iter()
                .any(|u| u.argv.iter().skip(1).any(|w| pipes_to_a_command(w)))
            // Code run by a program (an interpreter's `-c`/`-e`, a runner's `run`/`exec`), or
            // something it does that cannot be known (gdb's `python` command): its strings
            // may be commands it runs (`os.system("curl ...")`).
            || analysis.units.iter().any(|u| {
                u.effects().any(|e| {
                    matches!(
                        e.kind,
                        tool_shell::EffectKind::RunsCode | tool_shell::EffectKind::Unknown
                    )
                })
            });
        if uncertain {
            let env = tool_shell::analyze::ShellEnv::new(ctx.cwd.clone(), ctx.home.clone());
            let mut possible = crate::shell_policy::possible_commands(analysis, command, &env);
            possible.extend(crate::shell_policy::package_script_commands(analysis, &env));
            if let Some(e) = self.shell_match(RuleList::Deny, &possible) {
                return Some(denied(e));
            }
        }
        // A command substitution runs wherever the shell expands it, also where the analysis
        // did not take it apart (a parameter expansion's offset): what its commands read or
        // write meets the Read and Edit deny rules, and its commands the Bash ones.
        for body in crate::shell_policy::substitution_bodies(command) {
            if body.len() > 8192 || body == command {
                continue;
            }
            let inner = ShellLine::new(&body, ctx);
            if let Some((e, _)) = crate::shell_policy::denied_path(&inner.touched, &find, &names) {
                return Some(denied(e));
            }
            let inner_forms = Self::shell_forms(&body, &inner.analysis);
            if let Some(e) = self.shell_match(RuleList::Deny, &inner_forms) {
                return Some(denied(e));
            }
        }
        // (3) Ask rules: on the line and its units, and Read and Edit ask rules on every path
        // an effect reads or writes (the lattice: an explicit ask reached through any effect
        // stands, whatever allows the rest).
        if let Some(e) = self.shell_match(RuleList::Ask, &forms) {
            return Some(Decision::ask(
                self.ask_rule_message(request, line),
                e.reason(),
            ));
        }
        let find_ask = |family: PathFamily, p: &Path| self.path_rule(RuleList::Ask, family, p, ctx);
        let ask_names = |family: PathFamily| self.listed_names(RuleList::Ask, family);
        if let Some((e, path)) = crate::shell_policy::denied_path(touched, &find_ask, &ask_names) {
            // A path the line only writes: Claude Code asks about the write itself, in its
            // words (recorded: z1_redirect_read_ask_text).
            let written = touched.writes().any(|w| w.path == path)
                && !touched.reads().any(|r| r == path.as_path());
            let message = written
                .then(|| self.shell_ask_message(analysis, touched, ctx))
                .filter(|m| m != GENERIC_SHELL_ASK)
                .unwrap_or_else(|| Self::ask_message(request));
            return Some(Decision::ask(message, e.reason()));
        }
        // (4) A recursive search whose root holds a denied tree would print what it may not read.
        // What is there decides, unless the line may change the tree before the search
        // reaches it: a program's write by another unit (a link into the tree, a copy), a
        // redirection into the tree, a write whose file cannot be known or that no path names
        // (a branch checked out). The search's own output does not.
        let pathless_writes = || {
            analysis.units.iter().any(|u| {
                u.effects()
                    .any(|e| e.kind == tool_shell::EffectKind::Write && e.value.is_none())
            })
        };
        for (unit, root) in crate::shell_policy::search_roots(analysis, touched) {
            let look = touched.unknown_paths.is_empty()
                && !pathless_writes()
                && touched
                    .writes()
                    .all(|w| w.unit == unit || !crate::shell_policy::meets(&w.path, &root, ctx))
                && !touched
                    .writes()
                    .any(|w| w.unit != unit && w.op == crate::shell_policy::Op::Write);
            let follow = analysis
                .units
                .get(unit)
                .is_some_and(|u| u.interpretation.follows_links);
            if let Some(e) = self.denied_below_of(&[PathFamily::Read], &root, ctx, look, follow) {
                return Some(Self::checked_ask(
                    request,
                    format!(
                        "a recursive search of {} reaches files denied by {}",
                        root.display(),
                        e.source()
                    ),
                ));
            }
        }
        // (4b) A program whose input says which files it writes (an archive's members, a
        // patch's files) may write any file below where it works: an Edit deny rule on a file
        // there now, or on a name alone (`Edit(**/.envrc)`) the input may create, asks.
        let names_alone = || -> Vec<&str> {
            self.entries
                .iter()
                .filter(|e| e.list == RuleList::Deny)
                .filter_map(|e| match &e.matcher {
                    RuleMatcher::Path {
                        family: PathFamily::Edit,
                        pattern,
                    } if pattern.named_tree(ctx).is_none() => Some(pattern.line.as_str()),
                    _ => None,
                })
                .map(|line| {
                    line.trim_start_matches("./")
                        .trim_start_matches("**/")
                        .trim_start_matches('/')
                })
                .filter(|n| !n.is_empty() && !n.contains(['/', '*', '?', '[']))
                .collect()
        };
        for root in crate::shell_policy::writes_below_roots(analysis, touched) {
            let found = self
                .denied_below_of(&[PathFamily::Edit], &root, ctx, true, false)
                .or_else(|| {
                    names_alone().into_iter().find_map(|n| {
                        self.path_rule(RuleList::Deny, PathFamily::Edit, &root.join(n), ctx)
                    })
                });
            if let Some(e) = found {
                return Some(Self::checked_ask(
                    request,
                    format!(
                        "a program that writes the files its input names may write below {}, where {} denies some",
                        root.display(),
                        e.source()
                    ),
                ));
            }
        }
        // (4b') What an archive or patch unpacks may be a link (`tar -x` keeps symbolic links
        // and their `..` targets): a path below where one worked, used later in the line
        // through a directory that is not there now (so the unpacking may make it, a link),
        // may lead anywhere: a write (a protected path may be where it lands), or a read
        // where a Read deny rule could be met. `rm` and its kind act on a link itself.
        let read_denies = self.has_path_rules(RuleList::Deny, PathFamily::Read);
        for unpacked in touched.uses.iter().filter(|p| {
            p.op == crate::shell_policy::Op::Write
                && analysis
                    .units
                    .get(p.unit)
                    .is_some_and(|u| u.interpretation.writes_below)
        }) {
            let through_made = |path: &Path| {
                let Ok(rest) = path.strip_prefix(&unpacked.path) else {
                    return false;
                };
                let mut at = unpacked.path.clone();
                let parts: Vec<_> = rest.components().collect();
                parts.iter().take(parts.len().saturating_sub(1)).any(|c| {
                    at.push(c);
                    std::fs::symlink_metadata(&at).map_or(true, |m| !m.is_dir())
                })
            };
            if let Some(w) = touched.uses.iter().find(|w| {
                w.unit > unpacked.unit
                    && (w.op != crate::shell_policy::Op::Read || read_denies)
                    && !analysis
                        .units
                        .get(w.unit)
                        .is_some_and(|u| matches!(u.program(), "rm" | "unlink" | "rmdir" | "mv"))
                    && through_made(&w.path)
            }) {
                return Some(Self::checked_ask(
                    request,
                    format!(
                        "{} uses {} below {}, where {} unpacked files (a link among them may lead anywhere)",
                        w.command,
                        w.path.display(),
                        unpacked.path.display(),
                        unpacked.command
                    ),
                ));
            }
        }
        // (4c) A file a program loads from where it runs, not there now: denied once it is
        // (what is there now decides a read; what is not there yet is asked about).
        for load in &touched.absent_loads {
            if let Some(e) = self.path_rule(RuleList::Deny, PathFamily::Read, &load.path, ctx) {
                return Some(Self::checked_ask(
                    request,
                    format!(
                        "{} loads {} where it runs once it exists, which {} denies",
                        load.command,
                        load.path.display(),
                        e.source()
                    ),
                ));
            }
        }
        // (5)
        if !analysis.parsed {
            return Some(Self::checked_ask(
                request,
                "a command line that does not parse".into(),
            ));
        }
        // (6) A line that only changes the shell's own state (`set -e`, `alias`, a function)
        // runs under a whole-tool `Bash` allow where no deny or ask rule could be hidden from:
        // as in Claude Code. With any such rule, it asks (CONTRACT: fail closed).
        let only_state = analysis.problems.len() == analysis.state_problems
            && self.find(RuleList::Allow, "Bash").is_some()
            && !self.rules_reach_bash();
        if command.len() > MAX_COMMAND_BYTES
            || analysis.units.len() > MAX_UNITS
            || (!analysis.problems.is_empty() && !only_state)
        {
            return Some(Self::checked_ask(
                request,
                match analysis.problems.first() {
                    Some(p) => format!("a command line that cannot be analysed fully: {p}"),
                    None => "a command line over the analysis budget".into(),
                },
            ));
        }
        // (6b) A word that cannot be known (`~user`, `~1`, `${c@E}`, a substitution's output)
        // may be anything a deny or ask rule names: where such rules exist, it asks (CONTRACT:
        // fail closed).
        // (A program that only prints its words, `echo rc=$?`, does nothing with them.)
        if self.rules_reach_bash()
            && let Some(u) = analysis.units.iter().find(|u| {
                !u.certain
                    && (u.interpretation.path.is_empty() || !u.interpretation.effects.is_empty())
            })
        {
            let why = u
                .unknown_words
                .first()
                .or(u.unknown.first())
                .map_or_else(|| u.text.clone(), Clone::clone);
            return Some(Self::checked_ask(
                request,
                format!("a word that cannot be known where deny or ask rules apply: {why}"),
            ));
        }
        // (7)
        if let Some(what) = crate::shell_policy::catastrophic_removal(analysis, ctx) {
            return Some(Self::checked_ask(
                request,
                format!("a removal of the root, home or project directory: {what}"),
            ));
        }
        // (7b) git in a repository whose own config runs programs (`core.fsmonitor` runs on
        // `git status`): the command runs what that file names.
        for u in &analysis.units {
            if u.interpretation.path.first().map(String::as_str) != Some("git") {
                continue;
            }
            for config in git_configs(u) {
                let found = match &config {
                    GitConfig::Around(dir) => tool_shell::gitconfig::repository_runs_programs(dir),
                    GitConfig::File(file) => tool_shell::gitconfig::config_runs_programs(file),
                };
                if let Some(s) = found {
                    return Some(Self::checked_ask(
                        request,
                        format!(
                            "git in a repository whose own config runs programs: `{}` ({}:{})",
                            s.key,
                            s.file.display(),
                            s.line
                        ),
                    ));
                }
            }
        }
        // (7c) An option that makes a program run code from a file (`git clone --template`,
        // `prettier --plugin`, `kubectl --kubeconfig`): an allow rule for a program that is
        // not an interpreter did not allow the code it loads.
        for u in &analysis.units {
            let loaded =
                u.interpretation.effects.iter().find(|e| {
                    e.kind == tool_shell::EffectKind::RunsCode && e.source.option.is_some()
                });
            // The database is looked up only for a unit that loads code.
            if let Some(e) = loaded
                && !is_interpreter(u)
            {
                return Some(Self::checked_ask(
                    request,
                    format!(
                        "`{}` makes {} run code from {}",
                        e.source.option.as_deref().unwrap_or_default(),
                        e.source.program,
                        e.value.as_deref().unwrap_or("a file")
                    ),
                ));
            }
        }
        // (8a) A protected path given to a program that may write it in a way the database
        // does not model (`iconv -o .git/config`, `cpio -p .git/hooks`).
        if let Some(p) = unplaced
            .iter()
            .find(|p| crate::protected::protected_at(p, ctx).is_some())
        {
            return Some(Self::checked_ask(
                request,
                format!(
                    "a protected path given to a program whose use of it is not known: {}",
                    p.display()
                ),
            ));
        }
        // (8b) ... and a protected path below it is written as if named.
        for root in &trees {
            if let Some(p) = crate::protected::protected_below(root, ctx) {
                return Some(Self::checked_ask(
                    request,
                    format!(
                        "a change to everything below {} reaches the protected path {}",
                        root.display(),
                        p.display()
                    ),
                ));
            }
        }
        // (8)
        let compound = analysis
            .units
            .iter()
            .filter(|u| u.origin == tool_shell::analyze::Origin::Line)
            .count()
            > 1;
        for w in touched.writes() {
            let w = &w.path;
            if let Some(protection) = crate::protected::protected_at(w, ctx) {
                // Claude Code names the file, as for Edit; a compound line lists its parts.
                let message = if compound {
                    self.shell_ask_message(analysis, touched, ctx)
                } else {
                    let agent = &ctx.agent_name;
                    match protection {
                        crate::protected::Protection::SensitiveFile => format!(
                            "{agent} requested permissions to edit {} which is a sensitive file.",
                            w.display()
                        ),
                        crate::protected::Protection::AgentConfiguration => format!(
                            "{agent} requested permissions to write to {}, but you haven't granted it yet.",
                            w.display()
                        ),
                    }
                };
                return Some(Decision::ask(
                    message,
                    DecisionReason::Check {
                        name: "a write to a protected path".into(),
                    },
                ));
            }
            // Bypass mode waives this prompt (not the protected-path check above), and so does
            // a sandbox that will make the write fail.
            let outside = ctx.permission_mode != PermissionMode::BypassPermissions
                && !crate::path_rule::inside_working_dirs(ctx, w)
                && self.path_allowed(PathFamily::Edit, w, ctx).is_none()
                && !self.sandbox_contains_writes(command, ctx);
            if outside {
                return Some(Decision::ask(
                    self.shell_ask_message(analysis, touched, ctx),
                    DecisionReason::Check {
                        name: "a write outside the working directories".into(),
                    },
                ));
            }
        }
        // (9)
        let reads_inside = touched.reads().all(|p| {
            crate::path_rule::inside_working_dirs(ctx, p)
                || self.path_allowed(PathFamily::Read, p, ctx).is_some()
        });
        let redirect_ok = |p: &Path| self.redirect_permitted(p, ctx);
        if reads_inside
            && crate::shell_policy::args_inside(analysis, ctx, &|p| {
                self.path_allowed(PathFamily::Read, p, ctx).is_some()
                    || self.path_allowed(PathFamily::Edit, p, ctx).is_some()
            })
            && let Some(used) = crate::shell_policy::all_units_allowed(
                analysis,
                touched,
                ctx,
                &|form| self.shell_allows(form),
                &redirect_ok,
            )
        {
            // The reason is what let the line through: a Bash allow rule, else the Edit allow
            // rule (or acceptEdits) that covers a write it makes, else the Read allow rule
            // that covers a read outside the working directories; a line that needed none of
            // them is read-only.
            let write_rule = || {
                touched
                    .writes()
                    .find_map(|w| self.path_allowed(PathFamily::Edit, &w.path, ctx))
            };
            let read_rule = || {
                touched
                    .reads()
                    .filter(|p| !crate::path_rule::inside_working_dirs(ctx, p))
                    .find_map(|p| self.path_allowed(PathFamily::Read, p, ctx))
            };
            let reason = match used.first().copied().or_else(write_rule).or_else(read_rule) {
                Some(e) => e.reason(),
                None if touched.writes().next().is_some() => DecisionReason::Mode {
                    mode: ctx.permission_mode,
                },
                None => DecisionReason::Check {
                    name: "read-only command".into(),
                },
            };
            return Some(Decision::allow(reason));
        }
        None
    }

    /// The Bash rules' verdict on a line without the rest of a decision: deny rules on its
    /// units, Read and Edit deny rules on the paths they touch (with `paths`), then ask rules
    /// on its units. What applies to a program another program starts while a line runs.
    pub(crate) fn shell_rules_verdict(
        &self,
        command: &str,
        ctx: &tool_core::ToolContext,
        paths: bool,
    ) -> Option<Decision> {
        if let Some(e) = self.find(RuleList::Deny, "Bash") {
            return Some(Decision::deny(
                tool_core::texts::permission_denied("Bash"),
                e.reason(),
            ));
        }
        let line = ShellLine::new(command, ctx);
        let denied = |e: &RuleEntry| {
            Decision::deny(
                format!("Permission to use Bash with command {command} has been denied."),
                e.reason(),
            )
        };
        let forms = Self::shell_forms(command, &line.analysis);
        if let Some(e) = self.shell_match(RuleList::Deny, &forms) {
            return Some(denied(e));
        }
        if paths {
            let find =
                |family: PathFamily, p: &Path| self.path_rule(RuleList::Deny, family, p, ctx);
            let names = |family: PathFamily| self.denied_names(family);
            if let Some((e, _)) = crate::shell_policy::denied_path(&line.touched, &find, &names) {
                return Some(denied(e));
            }
        }
        self.shell_match(RuleList::Ask, &forms).map(|e| {
            Decision::ask(
                tool_core::texts::permission_not_granted(&ctx.agent_name, "Bash"),
                e.reason(),
            )
        })
    }

    /// The part of a denied line the deny message quotes (see `crate::deny_text`): the first
    /// piece between pipes that is denied on its own, or the whole line.
    fn denied_text(&self, command: &str, ctx: &tool_core::ToolContext) -> String {
        let Some(pieces) = crate::deny_text::pipe_pieces(command) else {
            return command.to_owned();
        };
        for piece in pieces {
            let denied = self
                .shell_rules_verdict(piece.trim(), ctx, true)
                .is_some_and(|d| d.verdict == tool_core::Verdict::Deny);
            if denied {
                return crate::deny_text::quoted_piece(piece).unwrap_or_else(|| command.to_owned());
            }
        }
        command.to_owned()
    }

    /// Where a line writes, as its analysis sees it.
    pub(crate) fn line_writes(
        &self,
        command: &str,
        ctx: &tool_core::ToolContext,
    ) -> Vec<std::path::PathBuf> {
        let line = ShellLine::new(command, ctx);
        line.touched.writes().map(|w| w.path.clone()).collect()
    }

    /// What the analysis of a Bash line saw, unit by unit, and which rule matched each: its
    /// words after expansion, its working directory, every effect with the database entry that
    /// produced it, and the deny, ask or allow rule (with file and line) that matched it: for a
    /// host that shows why a line was decided as it was.
    pub fn explain_shell(&self, command: &str, ctx: &tool_core::ToolContext) -> String {
        use std::fmt::Write as _;
        use tool_shell::analyze::Origin;
        let a = Self::analyze_shell(command, ctx);
        let t = crate::shell_policy::touches(&a, ctx);
        let mut out = String::new();
        let _ = writeln!(
            out,
            "analysis: {} unit(s){}{}",
            a.units.len(),
            if a.parsed {
                ""
            } else {
                ", the line does not parse (words scanned)"
            },
            if a.background {
                ", runs in the background"
            } else {
                ""
            }
        );
        for p in &a.problems {
            let _ = writeln!(out, "  problem: {p}");
        }
        for (i, u) in a.units.iter().enumerate() {
            let origin = match &u.origin {
                Origin::Line => "the line".to_owned(),
                Origin::Substitution => "a substitution".to_owned(),
                Origin::Carried { parent, via, .. } => format!("unit {parent} through {via}"),
            };
            let _ = writeln!(
                out,
                "unit {i}: {} (run by {origin}; in {}{})",
                serde_json::to_string(&u.argv).unwrap_or_default(),
                u.cwd.display(),
                if u.certain { "" } else { "; not known exactly" }
            );
            for a in &u.assignments {
                let _ = writeln!(out, "  assigns {}", a.raw);
            }
            for why in u.unknown.iter().chain(&u.unknown_words) {
                let _ = writeln!(out, "  unknown: {why}");
            }
            if u.interpretation.path.is_empty() && !u.is_bare() {
                let _ = writeln!(out, "  program: not in the command database");
            } else if !u.is_bare() {
                let _ = writeln!(out, "  program: {}", u.interpretation.path.join(" "));
            }
            for e in u.effects() {
                let value = e.value.as_deref().unwrap_or("(unknown)");
                let _ = writeln!(out, "  effect: {} {value} (from {})", e.kind, e.source);
            }
            let forms = crate::shell_policy::unit_forms(u);
            for (list, name) in [
                (RuleList::Deny, "deny"),
                (RuleList::Ask, "ask"),
                (RuleList::Allow, "allow"),
            ] {
                if let Some(e) = self.shell_match(list, &forms) {
                    let _ = writeln!(out, "  matches {name} rule {}", e.source());
                }
            }
            for p in t.uses.iter().filter(|p| p.unit == i) {
                let family = match p.op {
                    crate::shell_policy::Op::Read => PathFamily::Read,
                    _ => PathFamily::Edit,
                };
                if let Some(e) = self.path_rule(RuleList::Deny, family, &p.path, ctx) {
                    let _ = writeln!(out, "  {} is denied by {}", p.path.display(), e.source());
                }
            }
        }
        out
    }

    /// The forms deny and ask rules are matched against: the line as written, and every unit's
    /// words.
    pub(super) fn shell_forms(
        command: &str,
        analysis: &tool_shell::analyze::Analysis,
    ) -> Vec<String> {
        let mut forms = vec![command.trim().to_owned()];
        forms.extend(crate::shell_policy::match_forms(analysis));
        forms
    }

    /// May a shell redirection write `p`? With an Edit allow rule covering it, or in
    /// acceptEdits mode inside the working directories; never a protected path.
    pub(super) fn redirect_permitted(&self, p: &Path, ctx: &tool_core::ToolContext) -> bool {
        if crate::protected::protected_at(p, ctx).is_some() {
            return false;
        }
        (ctx.permission_mode == PermissionMode::AcceptEdits
            && crate::path_rule::inside_working_dirs(ctx, p))
            || self.path_allowed(PathFamily::Edit, p, ctx).is_some()
    }

    /// What the model is told when an ask rule matches a Bash line: for a compound line, the
    /// parts that need approval (those an ask rule matches, and those that write or are not
    /// read-only), when there are two or more; else Claude Code's generic text (recorded:
    /// explore seeds 11 and 13).
    /// Ask, with Claude Code's text, because of a built-in check named `name`.
    fn checked_ask(request: &PermissionRequest<'_>, name: String) -> Decision {
        Decision::ask(Self::ask_message(request), DecisionReason::Check { name })
    }

    fn ask_rule_message(&self, request: &PermissionRequest<'_>, line: &ShellLine) -> String {
        let (a, t) = (&line.analysis, &line.touched);
        let units = line_units(a);
        if units.len() < 2 {
            return Self::ask_message(request);
        }
        let parts: Vec<String> = units
            .iter()
            .filter(|&&i| {
                let text = &a.units[i].text;
                let unit = Policy::analyze_shell(text, request.ctx);
                self.shell_match(RuleList::Ask, &Self::shell_forms(text, &unit))
                    .is_some()
                    || t.writes().any(|w| w.unit == i)
                    || !tool_shell::is_read_only(text)
            })
            .map(|&i| a.units[i].text.clone())
            .collect();
        if parts.len() < 2 {
            return Self::ask_message(request);
        }
        crate::shell_policy::compound_message(&parts)
    }

    /// What the model is told when a Bash line needs approval that no rule asked for: the path
    /// outside the working directories, the parts of a compound line that need approval, the
    /// file write inside the working directories, or Claude Code's generic text.
    pub(super) fn shell_ask_message(
        &self,
        a: &tool_shell::analyze::Analysis,
        t: &crate::shell_policy::Touches,
        ctx: &tool_core::ToolContext,
    ) -> String {
        use crate::shell_policy::{Op, compound_message, outside_message, unit_allowed};
        let covered = |op: Op, p: &Path| match op {
            Op::Read => {
                self.path_allowed(PathFamily::Read, p, ctx).is_some()
                    || self.path_allowed(PathFamily::Edit, p, ctx).is_some()
            }
            Op::Write | Op::Redirect => self.path_allowed(PathFamily::Edit, p, ctx).is_some(),
        };
        let line_units = line_units(a);
        if line_units.len() > 1 {
            let needing: Vec<usize> = line_units
                .iter()
                .copied()
                .filter(|&i| {
                    a.units[i].program() != "cd"
                        && (unit_allowed(i, a, t, ctx, &|f| self.shell_allows(f), &|p| {
                            self.redirect_permitted(p, ctx)
                        })
                        .is_none()
                            || outside_message(t, ctx, Some(&[i]), &covered).is_some())
                })
                .collect();
            if needing.len() == 1
                && let Some(m) = outside_message(t, ctx, Some(&needing), &covered)
            {
                return m;
            }
            if !needing.is_empty() {
                let parts: Vec<String> = needing.iter().map(|&i| a.units[i].text.clone()).collect();
                return compound_message(&parts);
            }
        }
        outside_message(t, ctx, None, &covered)
            .or_else(|| crate::shell_policy::write_ask_message(a, t, ctx, &covered))
            .unwrap_or_else(|| GENERIC_SHELL_ASK.to_owned())
    }
}

/// What Claude Code tells the model about a Bash line that needs approval when no path or
/// part of it is named.
const GENERIC_SHELL_ASK: &str = "This command requires approval";

/// The indexes of the simple commands the line itself runs (not those of strings run as code).
/// Whether the unit's program runs code as its purpose (an interpreter: code is its operand,
/// or its standard input when it has none), so that an allow rule for it allows the code.
fn is_interpreter(u: &tool_shell::analyze::Unit) -> bool {
    let Some(name) = u.interpretation.path.first() else {
        return false;
    };
    tool_shell::db::database().program(name).is_some_and(|p| {
        p.bare.contains(&tool_shell::EffectKind::RunsCode)
            || p.operands
                .iter()
                .any(|slot| slot.roles.contains(&tool_shell::db::Role::RunsCode))
    })
}

/// Whether `word` holds a `|` that starts a command (at its start, or after a space or a
/// quote): what many programs take, in place of a file's name, for a pipe to that command.
fn pipes_to_a_command(word: &str) -> bool {
    let b = word.as_bytes();
    b.iter().enumerate().any(|(i, &c)| {
        c == b'|'
            && (i == 0 || matches!(b[i - 1], b' ' | b'\t' | b'\'' | b'"'))
            && b.get(i + 1)
                .is_some_and(|n| !n.is_ascii_whitespace() && *n != b'|')
    })
}

fn line_units(a: &tool_shell::analyze::Analysis) -> Vec<usize> {
    a.units
        .iter()
        .enumerate()
        .filter(|(_, u)| u.origin == tool_shell::analyze::Origin::Line)
        .map(|(i, _)| i)
        .collect()
}

/// A Bash line as a decision sees it: analysed once, with the paths its units touch.
pub(super) struct ShellLine {
    pub(super) analysis: tool_shell::analyze::Analysis,
    pub(super) touched: crate::shell_policy::Touches,
}

impl ShellLine {
    pub(super) fn new(command: &str, ctx: &tool_core::ToolContext) -> Self {
        let analysis = Policy::analyze_shell(command, ctx);
        let touched = crate::shell_policy::touches(&analysis, ctx);
        Self { analysis, touched }
    }
}

/// Longest command line analysed for an allow.
const MAX_COMMAND_BYTES: usize = 64 * 1024;
/// Most simple commands in one line analysed for an allow.
const MAX_UNITS: usize = 256;

/// Where a git unit reads its repository's config.
enum GitConfig {
    /// The repository around this directory.
    Around(std::path::PathBuf),
    /// This config file (`--git-dir DIR` reads `DIR/config`).
    File(std::path::PathBuf),
}

/// The configs a git unit reads: the repository around its working directory as changed by
/// `-C` options, and that of a `--git-dir` given on the command line.
fn git_configs(u: &tool_shell::analyze::Unit) -> Vec<GitConfig> {
    let mut dir = u.cwd.clone();
    let mut out = Vec::new();
    let mut words = u.argv.iter().skip(1);
    while let Some(w) = words.next() {
        if w == "-C" {
            if let Some(d) = words.next() {
                dir = dir.join(d);
            }
        } else if let Some(d) = w.strip_prefix("--git-dir=") {
            out.push(GitConfig::File(dir.join(d).join("config")));
        } else if w == "--git-dir" {
            if let Some(d) = words.next() {
                out.push(GitConfig::File(dir.join(d).join("config")));
            }
        } else if !w.starts_with('-') {
            break;
        } else if matches!(
            w.as_str(),
            "-c" | "--config-env" | "--work-tree" | "--namespace"
        ) {
            words.next();
        }
    }
    out.push(GitConfig::Around(dir));
    out
}
