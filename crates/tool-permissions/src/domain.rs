//! `WebFetch(domain:...)` rules: a host, or `*.host` for its subdomains.
//!
//! Hosts are compared whole, label by label: `domain:example.com` never covers
//! `example.com.evil.net` or `notexample.com`, and `*.example.com` covers `a.example.com`
//! but not `example.com` itself. A URL whose host cannot be read unambiguously (percent
//! escapes, odd characters, no `scheme://`) matches no rule, so no allow rule can cover it.

/// A compiled domain rule content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DomainPattern {
    host: String,
    subdomains: bool,
}

impl DomainPattern {
    /// Compile `domain:<host>` or `domain:*.<host>`.
    pub(crate) fn parse(content: &str) -> Result<Self, String> {
        let Some(host) = content.trim().strip_prefix("domain:") else {
            return Err("WebFetch rules take `domain:<host>` (or `domain:*.<host>`)".into());
        };
        let (subdomains, host) = match host.strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, host),
        };
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        if host.is_empty() {
            return Err("the domain is empty".into());
        }
        if let Some(c) = host.chars().find(|c| !is_host_char(*c)) {
            return Err(format!(
                "`{c}` cannot appear in a domain (only letters, digits, `-` and `.`; `*.` only at the start)"
            ));
        }
        if host.split('.').any(str::is_empty) {
            return Err("a domain cannot have an empty label".into());
        }
        Ok(Self { host, subdomains })
    }

    /// Does the pattern cover `host` (lower case, as [`url_host`] returns it)?
    pub(crate) fn matches(&self, host: &str) -> bool {
        if self.subdomains {
            host.strip_suffix(self.host.as_str())
                .is_some_and(|rest| rest.len() > 1 && rest.ends_with('.'))
        } else {
            host == self.host
        }
    }
}

fn is_host_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '.')
}

/// The host of an `http(s)://` URL as the WHATWG URL Standard reads it (the `url` crate, as
/// browsers and fetch do): tabs and newlines removed, a backslash read as a slash, the host
/// percent-decoded, mapped by IDNA (`evil．example` is `evil.example`) and lower-cased, IPv4
/// numbers in any base made dotted-decimal; without a trailing dot. `None` when it is not a
/// web URL the standard accepts.
pub(crate) fn url_host(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url.trim()).ok()?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return None;
    }
    let host = match parsed.host()? {
        url::Host::Domain(d) => d.trim_end_matches('.').to_owned(),
        url::Host::Ipv4(a) => a.to_string(),
        // An IPv4 address written as IPv6 (`[::ffff:169.254.169.254]`) reaches that IPv4
        // host on a dual-stack system: it is that host.
        url::Host::Ipv6(a) => match a.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => format!("[{a}]"),
        },
    };
    if host.is_empty() || host.split('.').any(str::is_empty) {
        return None;
    }
    Some(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_hosts_compare_whole() {
        let p = DomainPattern::parse("domain:Example.com").unwrap();
        assert!(p.matches("example.com"));
        assert!(!p.matches("a.example.com"));
        assert!(!p.matches("notexample.com"));
        assert!(!p.matches("example.com.evil.net"));
    }

    #[test]
    fn wildcards_cover_subdomains_only() {
        let p = DomainPattern::parse("domain:*.example.com").unwrap();
        assert!(p.matches("a.example.com"));
        assert!(p.matches("a.b.example.com"));
        assert!(!p.matches("example.com"));
        assert!(!p.matches("badexample.com"));
    }

    #[test]
    fn bad_patterns_are_errors() {
        for bad in [
            "example.com",
            "domain:",
            "domain:exa mple.com",
            "domain:a..b",
            "domain:*x.com",
            "domain:ex*.com",
        ] {
            assert!(DomainPattern::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn hosts_are_read_like_a_browser() {
        assert_eq!(
            url_host("https://Example.COM/x").as_deref(),
            Some("example.com")
        );
        assert_eq!(
            url_host("https://u:p@example.com:8443/").as_deref(),
            Some("example.com")
        );
        assert_eq!(
            url_host("http://example.com./").as_deref(),
            Some("example.com")
        );
        assert_eq!(
            url_host("http://evil.net\\@example.com/").as_deref(),
            Some("evil.net")
        );
        assert_eq!(
            url_host("https://example.com#@evil.net").as_deref(),
            Some("example.com")
        );
        assert_eq!(url_host("http://[::1]:80/").as_deref(), Some("[::1]"));
        // Every spelling the URL Standard maps to a host is that host.
        for spelled in [
            "https://ex%61mple.com/",
            "https://example%2Ecom/",
            "https://example\u{ff0e}com/",
            "https:\\\\example.com\\x",
            "https://exam\tple.com/",
            "https://exa\nmple.com/",
            "HTTPS://EXAMPLE.COM:443/",
            "http://a:b@example.com:80/",
            "https://example.com./",
            "https://ＥＸＡＭＰＬＥ.com/",
        ] {
            assert_eq!(
                url_host(spelled).as_deref(),
                Some("example.com"),
                "{spelled:?}"
            );
        }
        assert_eq!(url_host("http://0x7f.1/").as_deref(), Some("127.0.0.1"));
        assert_eq!(url_host("http://2130706433/").as_deref(), Some("127.0.0.1"));
        assert_eq!(url_host("ftp://example.com/"), None);
        assert_eq!(url_host("https://example.com\0.evil.net/"), None);
        assert_eq!(url_host("file:///etc/passwd"), None);
        assert_eq!(url_host("example.com"), None);
    }
}
