//! `awk` programs (POSIX awk and gawk's extensions), lexed and scanned for what reaches
//! outside the input stream: `system(CMD)`, `print`/`printf` redirected with `>`, `>>`, `|`
//! or `|&`, `CMD | getline`, `getline < FILE`, gawk's `@include`/`@load` and indirect calls
//! (`@f()`, which may name `system`), and changes to `ARGV`/`ARGC` (which choose the input
//! files). A file or command given as string literals is reported by value; any other
//! expression is unknown. It does not check the grammar beyond balanced brackets.

mod lex;

use lex::Tok;

use super::ScriptEffects;

/// What an awk program reads, writes and runs.
pub fn analyze(program: &str) -> ScriptEffects {
    let toks = match lex::tokens(program) {
        Ok(toks) => toks,
        Err(err) => {
            return ScriptEffects::unknown(format!(
                "the awk program does not parse at byte {}: {}",
                err.at, err.what
            ));
        }
    };
    if let Err(what) = balanced(&toks) {
        return ScriptEffects::unknown(format!("the awk program does not parse: {what}"));
    }
    let mut scan = Scan {
        toks: &toks,
        effects: ScriptEffects::default(),
    };
    for i in 0..toks.len() {
        scan.token(i);
    }
    scan.effects
}

/// Output names awk writes to its own standard streams, not to a file.
fn is_special_output(name: &str) -> bool {
    matches!(name, "-" | "/dev/stdout" | "/dev/stderr") || is_dev_fd(name)
}

/// Input names awk reads from its standard input or an inherited descriptor.
fn is_special_input(name: &str) -> bool {
    matches!(name, "-" | "/dev/stdin") || is_dev_fd(name)
}

fn is_dev_fd(name: &str) -> bool {
    name.strip_prefix("/dev/fd/")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Built-in functions of POSIX awk and gawk; a call to any other name is a user function.
const BUILTINS: [&str; 39] = [
    "length", "substr", "index", "split", "sub", "gsub", "match", "sprintf", "sin", "cos", "atan2",
    "exp", "log", "sqrt", "int", "rand", "srand", "tolower", "toupper", "system", "close",
    "fflush", "gensub", "strftime", "systime", "mktime", "and", "or", "xor", "lshift", "rshift",
    "compl", "asort", "asorti", "patsplit", "isarray", "typeof", "strtonum", "mkbool",
];

/// Built-ins that assign to an argument (an lvalue or an array).
const ASSIGNING_BUILTINS: [&str; 6] = ["sub", "gsub", "split", "patsplit", "asort", "asorti"];

const ASSIGN_OPS: [&str; 10] = ["=", "+=", "-=", "*=", "/=", "%=", "^=", "**=", "++", "--"];

/// Tokens that end the operand left of `| getline` (a concatenation of primaries).
fn ends_pipe_operand(tok: &Tok) -> bool {
    match tok {
        Tok::Newline | Tok::At(_) => true,
        Tok::Op(op) => {
            matches!(
                *op,
                "(" | "["
                    | ","
                    | ";"
                    | "{"
                    | "}"
                    | "?"
                    | ":"
                    | "&&"
                    | "||"
                    | "!"
                    | "<"
                    | "<="
                    | ">"
                    | ">="
                    | "=="
                    | "!="
                    | "~"
                    | "!~"
                    | "|"
                    | "|&"
                    | ">>"
            ) || ASSIGN_OPS.contains(op)
        }
        Tok::Name(name) => matches!(
            name.as_str(),
            "in" | "print"
                | "printf"
                | "return"
                | "if"
                | "while"
                | "for"
                | "do"
                | "else"
                | "delete"
                | "exit"
                | "case"
                | "getline"
        ),
        Tok::Str(_) | Tok::Regex | Tok::Num | Tok::Func(_) => false,
    }
}

fn balanced(toks: &[Tok]) -> Result<(), String> {
    let mut stack = Vec::new();
    for tok in toks {
        if let Tok::Op(op) = tok {
            match *op {
                "(" | "[" | "{" => stack.push(*op),
                ")" | "]" | "}" => {
                    let want = match *op {
                        ")" => "(",
                        "]" => "[",
                        _ => "{",
                    };
                    if stack.pop() != Some(want) {
                        return Err(format!("unbalanced `{op}'"));
                    }
                }
                _ => {}
            }
        }
    }
    match stack.last() {
        Some(open) => Err(format!("unclosed `{open}'")),
        None => Ok(()),
    }
}

/// The value of tokens that are only string literals (and grouping parentheses), which awk
/// concatenates; `None` for anything computed.
fn literal(toks: &[Tok]) -> Option<String> {
    let mut value = String::new();
    let mut any = false;
    for tok in toks {
        match tok {
            Tok::Str(s) => {
                value.push_str(s);
                any = true;
            }
            Tok::Op("(" | ")") => {}
            _ => return None,
        }
    }
    any.then_some(value)
}

fn is_op(tok: Option<&Tok>, want: &str) -> bool {
    matches!(tok, Some(Tok::Op(op)) if *op == want)
}

/// A name or keyword, whether or not a `(` follows it.
fn is_name(tok: Option<&Tok>, want: &str) -> bool {
    matches!(tok, Some(Tok::Name(name) | Tok::Func(name)) if name == want)
}

struct Scan<'a> {
    toks: &'a [Tok],
    effects: ScriptEffects,
}

impl Scan<'_> {
    fn get(&self, i: usize) -> Option<&Tok> {
        self.toks.get(i)
    }

    fn prev(&self, i: usize) -> Option<&Tok> {
        i.checked_sub(1).and_then(|p| self.toks.get(p))
    }

    /// The index just past the bracket group opening at `open` (`(` or `[`).
    fn skip_group(&self, open: usize) -> usize {
        let mut depth = 0usize;
        for (i, tok) in self.toks.iter().enumerate().skip(open) {
            match tok {
                Tok::Op("(" | "[" | "{") => depth += 1,
                Tok::Op(")" | "]" | "}") => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return i + 1;
                    }
                }
                _ => {}
            }
        }
        self.toks.len()
    }

    /// The unmatched `(` enclosing `i`, if any, before the start of its statement.
    fn enclosing_paren(&self, i: usize) -> Option<usize> {
        let mut depth = 0usize;
        for j in (0..i).rev() {
            match &self.toks[j] {
                Tok::Op(")" | "]") => depth += 1,
                Tok::Op("(" | "[") if depth > 0 => depth -= 1,
                Tok::Op("(") => return Some(j),
                Tok::Op("[" | "{" | "}" | ";") | Tok::Newline if depth == 0 => return None,
                _ => {}
            }
        }
        None
    }

    fn unknown(&mut self, why: String) {
        self.effects.unknown.push(why);
    }

    fn exec(&mut self, what: &str, toks: &[Tok]) {
        match literal(toks) {
            Some(command) => self.effects.exec_strings.push(command),
            None => self.unknown(format!("awk {what} runs a command computed at run time")),
        }
    }

    fn token(&mut self, i: usize) {
        match &self.toks[i] {
            Tok::At(name) => self.directive(i, name),
            Tok::Name(name) | Tok::Func(name)
                if name == "system" && is_op(self.get(i + 1), "(") =>
            {
                let end = self.skip_group(i + 1);
                let args = &self.toks[i + 2..end.saturating_sub(1).max(i + 2)];
                self.exec("system()", args);
            }
            Tok::Name(name) | Tok::Func(name) if name == "print" || name == "printf" => {
                self.print(i)
            }
            Tok::Op(pipe @ ("|" | "|&")) if is_name(self.get(i + 1), "getline") => {
                let start = self.pipe_operand_start(i);
                let what = format!("`{pipe} getline'");
                self.exec(&what, &self.toks[start..i]);
            }
            Tok::Name(name) | Tok::Func(name)
                if name == "getline" && !matches!(self.prev(i), Some(Tok::Op("|" | "|&"))) =>
            {
                self.getline_file(i);
            }
            Tok::Name(name) if name == "ARGV" || name == "ARGC" => self.argv(i, name),
            _ => {}
        }
    }

    fn directive(&mut self, i: usize, name: &str) {
        match name {
            "namespace" => {}
            "include" | "load" => {
                let target = match self.get(i + 1) {
                    Some(Tok::Str(s)) => format!(" {s:?}"),
                    _ => String::new(),
                };
                self.unknown(format!("gawk @{name}{target} brings in code"));
            }
            _ => self.unknown(format!(
                "gawk indirect call @{name}() calls a function named at run time"
            )),
        }
    }

    /// A `print`/`printf` statement at `i`: its redirection, if any, is the first `>`, `>>`,
    /// `|` or `|&` outside parentheses before the end of the statement. Brackets do not
    /// shield it (gawk reads `print a[x > 1]` as a redirection, and refuses the program).
    fn print(&mut self, i: usize) {
        let (mut parens, mut brackets) = (0usize, 0usize);
        let mut redirect: Option<(usize, &'static str)> = None;
        let mut end = self.toks.len();
        for j in i + 1..self.toks.len() {
            let outside = parens == 0 && brackets == 0;
            match &self.toks[j] {
                Tok::Op("(") => parens += 1,
                Tok::Op("[") => brackets += 1,
                Tok::Op(")") if parens > 0 => parens -= 1,
                Tok::Op("]") if brackets > 0 => brackets -= 1,
                Tok::Op(")" | "]" | ";" | "}") if outside => {
                    end = j;
                    break;
                }
                Tok::Newline if outside && !is_op(self.prev(j), ",") => {
                    end = j;
                    break;
                }
                Tok::Op(op @ (">" | ">>" | "|" | "|&"))
                    if parens == 0
                        && redirect.is_none()
                        && !is_name(self.get(j + 1), "getline") =>
                {
                    redirect = Some((j, op));
                }
                _ => {}
            }
        }
        let Some((at, op)) = redirect else {
            return;
        };
        let target = &self.toks[at + 1..end];
        if op == "|" || op == "|&" {
            self.exec(&format!("print `{op}'"), target);
            return;
        }
        match literal(target) {
            Some(name) if is_special_output(&name) => {}
            Some(name) => self.effects.writes.push(name),
            None => self.unknown(format!("awk print `{op}' writes a file named at run time")),
        }
    }

    /// Where the operand left of the `| getline` at `pipe` starts.
    fn pipe_operand_start(&self, pipe: usize) -> usize {
        let mut j = pipe;
        while j > 0 {
            let tok = &self.toks[j - 1];
            if let Tok::Op(")" | "]") = tok {
                // Step back over the whole group.
                let mut depth = 0usize;
                let mut k = j;
                while k > 0 {
                    k -= 1;
                    match &self.toks[k] {
                        Tok::Op(")" | "]") => depth += 1,
                        Tok::Op("(" | "[") => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                // A call's name belongs to the group.
                if k > 0 && matches!(self.toks[k - 1], Tok::Func(_)) {
                    k -= 1;
                }
                j = k;
                continue;
            }
            if ends_pipe_operand(tok) {
                break;
            }
            j -= 1;
        }
        j
    }

    /// `getline [var] < FILE` at `i` (not the `CMD | getline` form).
    fn getline_file(&mut self, i: usize) {
        let mut k = i + 1;
        match self.get(k) {
            Some(Tok::Name(name)) if !ends_pipe_operand(&self.toks[k]) && name != "getline" => {
                k += 1;
                if is_op(self.get(k), "[") {
                    k = self.skip_group(k);
                }
            }
            Some(Tok::Op("$")) => {
                k += 1;
                while is_op(self.get(k), "$") {
                    k += 1;
                }
                if is_op(self.get(k), "(") {
                    k = self.skip_group(k);
                } else {
                    k += 1;
                }
            }
            _ => {}
        }
        if !is_op(self.get(k), "<") {
            return;
        }
        let (value, next) = match self.get(k + 1) {
            Some(Tok::Str(s)) => (Some(s.clone()), k + 2),
            Some(Tok::Op("(")) => {
                let end = self.skip_group(k + 1);
                (literal(&self.toks[k + 1..end]), end)
            }
            _ => (None, k + 2),
        };
        // `getline < "a" "b"` reads "a" in gawk, but awks differ: refuse to guess.
        let continues = matches!(
            self.get(next),
            Some(Tok::Str(_) | Tok::Num | Tok::Func(_) | Tok::Op("$" | "("))
        ) || matches!(self.get(next), Some(t @ Tok::Name(_)) if !ends_pipe_operand(t));
        match value {
            Some(_) if continues => {
                self.unknown("awk `getline <' is followed by a concatenation".to_owned())
            }
            Some(name) if name.starts_with("/inet") => self.unknown(format!(
                "awk `getline < {name:?}' opens a network connection"
            )),
            Some(name) if is_special_input(&name) => {}
            Some(name) => self.effects.reads.push(name),
            None => self.unknown("awk `getline <' reads a file named at run time".to_owned()),
        }
    }

    /// `ARGV` and `ARGC` name the input files: a program that changes them reads files no
    /// one named on the command line.
    fn argv(&mut self, i: usize, name: &str) {
        let why = format!("awk program changes {name}, which names the input files");
        if matches!(self.prev(i), Some(Tok::Op("++" | "--")))
            || is_name(self.prev(i), "delete")
            || is_name(self.prev(i), "getline")
        {
            self.unknown(why);
            return;
        }
        let mut k = i + 1;
        if is_op(self.get(k), "[") {
            k = self.skip_group(k);
        } else if name == "ARGV" && !is_name(self.prev(i), "in") {
            self.unknown(format!("awk program passes ARGV as an array: {why}"));
            return;
        }
        if matches!(self.get(k), Some(Tok::Op(op)) if ASSIGN_OPS.contains(op)) {
            self.unknown(why);
            return;
        }
        // An argument of a built-in that assigns to it, or of a user function.
        let call = matches!(self.prev(i), Some(Tok::Op("(" | ",")))
            .then(|| self.enclosing_paren(i))
            .flatten()
            .and_then(|open| self.prev(open));
        if let Some(Tok::Func(func)) = call
            && (ASSIGNING_BUILTINS.contains(&func.as_str()) || !BUILTINS.contains(&func.as_str()))
        {
            self.unknown(why);
        }
    }
}
