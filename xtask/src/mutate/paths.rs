//! Path rewrites: other spellings of one path (in a Bash operand or a tool's path input) and
//! the staging some of them need (a real directory for `a/..`, a symlink alias).

use super::{Family, Rng};
use crate::security::Extra;

/// Where a path appears, which decides the rewrites that keep its meaning.
pub(super) struct PathCtx<'a> {
    /// The virtual working directory the path is relative to, when known.
    pub cwd: Option<&'a str>,
    /// A relative path here resolves against `cwd` (no `cd` before it in the command).
    pub can_rel: bool,
    /// The path names a directory.
    pub is_dir: bool,
    /// The consumer follows a symlink at this path (so an alias means the same file).
    pub follows: bool,
    /// The path is a Bash word (so `$HOME` is available and a relative spelling keeps a `/`).
    pub bash: bool,
    /// The word holds glob characters.
    pub glob: bool,
    /// Place a symlink alias beside its target rather than in the cwd (for allowed cases).
    pub sibling_links: bool,
}

/// An absolute path with `.` and `..` folded and `//` collapsed, textually (the engine's own
/// lexical normalisation).
pub(super) fn lexical(p: &str) -> String {
    tool_core::normalize(std::path::Path::new(p))
        .display()
        .to_string()
}

/// A virtual path that the runner's staging maps into its temporary root.
pub(super) fn mappable(p: &str) -> bool {
    p.starts_with("/w/") || p == "/home/u" || p.starts_with("/home/u/")
}

fn virtual_abs(p: &str, pc: &PathCtx<'_>) -> Option<String> {
    let raw = if p == "~" {
        "/home/u".to_owned()
    } else if let Some(rest) = p.strip_prefix("~/") {
        format!("/home/u/{rest}")
    } else if p.starts_with('/') {
        p.to_owned()
    } else if pc.can_rel {
        format!("{}/{p}", pc.cwd?)
    } else {
        return None;
    };
    Some(lexical(&raw))
}

/// Rewrite `p` by `family`, or `None` when the family does not apply to it.
pub(super) fn rewrite(
    family: Family,
    p: &str,
    pc: &PathCtx<'_>,
    rng: &mut Rng,
    extra: &mut Extra,
) -> Option<String> {
    let windows = p.contains('\\') || p.as_bytes().get(1) == Some(&b':');
    let tilde_user = p.starts_with('~') && p != "~" && !p.starts_with("~/");
    if p.is_empty() || windows || tilde_user || p.starts_with('-') || p.starts_with('$') {
        return None;
    }
    let slashes: Vec<usize> = p.match_indices('/').map(|(i, _)| i).collect();
    let relative = !p.starts_with('/') && !p.starts_with('~');
    match family {
        Family::PathDot => {
            let mut options: Vec<String> = slashes
                .iter()
                .map(|&i| format!("{}./{}", &p[..=i], &p[i + 1..]))
                .collect();
            if relative {
                options.push(format!("./{p}"));
            }
            rng.take(options)
        }
        Family::PathSlash => rng.take(
            slashes
                .iter()
                .map(|&i| format!("{}/{}", &p[..=i], &p[i + 1..]))
                .collect(),
        ),
        Family::PathDotdotFake | Family::PathDotdotReal => {
            if pc.glob {
                return None;
            }
            let real = family == Family::PathDotdotReal;
            let name = if real { "mutdir" } else { "mutnx" };
            let mut points: Vec<usize> = slashes.iter().map(|i| i + 1).collect();
            if relative {
                points.push(0);
            }
            // Not after a trailing slash: `x/mutnx/..` would become `x/mutnx/../`.
            points.retain(|&k| k < p.len());
            let k = rng.take(points)?;
            if real {
                let prefix = &p[..k];
                let base = if prefix.is_empty() { "." } else { prefix };
                let dir = virtual_abs(base, pc)?;
                let dir = lexical(&format!("{dir}/{name}"));
                if !mappable(&dir) {
                    return None;
                }
                extra.dirs.push(dir);
            }
            Some(format!("{}{name}/../{}", &p[..k], &p[k..]))
        }
        Family::PathTrailing => (pc.is_dir && !p.ends_with('/')).then(|| format!("{p}/")),
        Family::PathHome => {
            let rest = if let Some(r) = p.strip_prefix('~') {
                Some((r, true))
            } else {
                p.strip_prefix("/home/u")
                    .filter(|r| r.is_empty() || r.starts_with('/'))
                    .map(|r| (r, false))
            };
            let (rest, from_tilde) = rest?;
            let mut options = Vec::new();
            if from_tilde {
                options.push(format!("/home/u{rest}"));
            } else {
                options.push(if rest.is_empty() {
                    "~".to_owned()
                } else {
                    format!("~{rest}")
                });
            }
            if pc.bash {
                options.push(format!("$HOME{rest}"));
                options.push(format!("${{HOME}}{rest}"));
                options.push(format!("\"$HOME\"{rest}"));
            }
            rng.take(options)
        }
        Family::PathRelAbs => {
            let cwd = pc.cwd.filter(|_| pc.can_rel)?;
            if relative {
                let r = p.strip_prefix("./").unwrap_or(p);
                Some(if r == "." || r.is_empty() {
                    cwd.to_owned()
                } else {
                    format!("{cwd}/{r}")
                })
            } else if p == cwd || p == format!("{cwd}/") {
                Some(".".to_owned())
            } else {
                let r = p
                    .strip_prefix(cwd)?
                    .strip_prefix('/')?
                    .trim_start_matches('/');
                let dotted = format!("./{r}");
                Some(if pc.bash || rng.below(2) == 0 {
                    dotted
                } else {
                    r.to_owned()
                })
            }
        }
        Family::PathSymlink => {
            if pc.glob || !pc.follows {
                return None;
            }
            let cwd = pc.cwd.filter(|c| mappable(&format!("{c}/")))?;
            let va = virtual_abs(p, pc)?;
            if !mappable(&va) {
                return None;
            }
            let name = format!(".mutlink{}", extra.links.len());
            if pc.sibling_links {
                // An alias beside the file: the link matches the rules its target matches
                // (what an allow needs, §8), so the alias must stay allowed.
                let (dir, _) = va.rsplit_once('/')?;
                if !mappable(dir) {
                    return None;
                }
                let link = format!("{dir}/{name}");
                extra.links.push((link.clone(), va, pc.is_dir));
                return Some(link);
            }
            let link = format!("{cwd}/{name}");
            let ancestors: Vec<String> = (1..va.len())
                .filter(|&i| va.as_bytes()[i] == b'/')
                .map(|i| va[..i].to_owned())
                .filter(|a| mappable(a))
                .collect();
            let (target, rest, dir) = match rng.take(ancestors).filter(|_| rng.below(2) == 0) {
                Some(a) => {
                    let rest = va[a.len()..].to_owned();
                    (a, rest, true)
                }
                None => (va.clone(), String::new(), pc.is_dir),
            };
            if target == link {
                return None;
            }
            extra.links.push((link.clone(), target, dir));
            Some(if pc.can_rel && rng.below(2) == 0 {
                format!("./{name}{rest}")
            } else {
                format!("{link}{rest}")
            })
        }
        Family::PathProc => {
            // Only paths inside the staged root, where the file can be made to exist, so that
            // resolving `/proc/self/root` (a symlink to `/`) is all the engine has to do.
            let va = virtual_abs(p, pc)?;
            if !mappable(&va) {
                return None;
            }
            let spelled = if p.starts_with('/') {
                p.to_owned()
            } else {
                va.clone()
            };
            extra.force_root = true;
            if !pc.glob {
                if pc.is_dir {
                    extra.dirs.push(va);
                } else {
                    extra.files.push(va);
                }
            }
            Some(format!("/proc/self/root{spelled}"))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(bash: bool) -> PathCtx<'static> {
        PathCtx {
            cwd: Some("/w/p"),
            can_rel: true,
            is_dir: false,
            follows: true,
            bash,
            glob: false,
            sibling_links: false,
        }
    }

    #[test]
    fn every_rewrite_normalises_to_the_same_path() {
        let pc = ctx(false);
        for p in [
            "/w/p/.env",
            ".env",
            "~/.ssh/id_rsa",
            "/home/u/.ssh/config",
            "src/a.rs",
        ] {
            let want = virtual_abs(p, &pc).expect("resolvable");
            for seed in 0..40 {
                for f in [
                    Family::PathDot,
                    Family::PathSlash,
                    Family::PathDotdotFake,
                    Family::PathDotdotReal,
                    Family::PathHome,
                    Family::PathRelAbs,
                ] {
                    let mut extra = Extra::default();
                    let mut rng = Rng::new(seed);
                    if let Some(q) = rewrite(f, p, &pc, &mut rng, &mut extra) {
                        assert_eq!(
                            virtual_abs(&q, &pc).as_deref(),
                            Some(&*want),
                            "{f:?} {p} -> {q}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn symlink_alias_points_at_the_target() {
        let pc = ctx(false);
        for seed in 0..20 {
            let mut extra = Extra::default();
            let q = rewrite(
                Family::PathSymlink,
                "/home/u/.ssh/id_rsa",
                &pc,
                &mut Rng::new(seed),
                &mut extra,
            )
            .expect("applies");
            let (link, target, _) = &extra.links[0];
            let via = q
                .replacen("./", "/w/p/", 1)
                .replacen(link.as_str(), target, 1);
            assert_eq!(lexical(&via), "/home/u/.ssh/id_rsa", "{q} {extra:?}");
        }
        assert!(
            rewrite(
                Family::PathSymlink,
                "/opt/x",
                &pc,
                &mut Rng::new(1),
                &mut Extra::default()
            )
            .is_none()
        );
    }
}
