//! NDN name regular expressions, as ndn-cxx's `Regex` reads them in validator configurations.
//!
//! # Overview
//! A pattern matches a name component by component:
//! - `<x>` one component whose URI form matches the regular expression `x` whole (`<KEY>`,
//!   `<ab.*>`); `<>` any component;
//! - `[<a><b>]` one component matching any of them, `[^<a><b>]` one matching none;
//! - `( … )` a group, captured for expansion (`\1` is the first group, by opening parenthesis);
//! - each of those followed by `*`, `+`, `?`, `{n}`, `{n,}`, `{,m}` or `{n,m}` repeats it;
//! - `^` and `$` anchor the pattern at the name's start and end; without them it may match
//!   any run of components, as in ndn-cxx.
//!
//! [`NameRegex::expand`] builds a name from the last match's groups and literal components
//! (`\1<KEY>`), as the validator's hyper-relation checker uses it. Matching backtracks over
//! components, greedy first; the patterns are an operator's and short.

use nexthop_wire::Name;
use regex::Regex;

/// A pattern that does not parse, with why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("name regex {pattern:?}: {why}")]
pub struct RegexError {
    /// The pattern.
    pub pattern: String,
    /// What is wrong.
    pub why: String,
}

/// One component test.
#[derive(Debug, Clone)]
enum ComponentTest {
    Any,
    Matches(Regex),
}

impl ComponentTest {
    fn matches(&self, uri: &str) -> bool {
        match self {
            ComponentTest::Any => true,
            ComponentTest::Matches(r) => r.is_match(uri),
        }
    }
}

/// What one pattern element matches, once.
#[derive(Debug, Clone)]
enum Atom {
    Component(ComponentTest),
    Set { negated: bool, tests: Vec<ComponentTest> },
    Group { index: usize, items: Vec<Item> },
}

/// An element and how many times in a row.
#[derive(Debug, Clone)]
struct Item {
    atom: Atom,
    min: usize,
    max: usize,
}

/// A compiled NDN name regex.
#[derive(Debug, Clone)]
pub struct NameRegex {
    pattern: String,
    items: Vec<Item>,
    groups: usize,
    anchored_start: bool,
    anchored_end: bool,
}

/// Captured groups: (start, end) component offsets.
type Captures = Vec<Option<(usize, usize)>>;

impl NameRegex {
    /// Compiles `pattern`.
    ///
    /// # Errors
    /// [`RegexError`] naming what does not parse.
    pub fn new(pattern: &str) -> Result<NameRegex, RegexError> {
        let err = |why: &str| RegexError { pattern: pattern.to_string(), why: why.to_string() };
        let mut body = pattern.trim();
        let anchored_start = body.starts_with('^');
        if anchored_start {
            body = &body[1..];
        }
        let anchored_end = body.ends_with('$');
        if anchored_end {
            body = &body[..body.len() - 1];
        }
        let mut parser = Parser { text: body.as_bytes(), at: 0, groups: 0 };
        let items = parser.sequence().map_err(|e| err(&e))?;
        if parser.at != body.len() {
            return Err(err(&format!("unexpected {:?} at {}", body.as_bytes()[parser.at] as char, parser.at)));
        }
        Ok(NameRegex { pattern: pattern.to_string(), items, groups: parser.groups, anchored_start, anchored_end })
    }

    /// The pattern as written.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// Whether `name` matches; its groups if so.
    fn captures(&self, name: &Name) -> Option<(Vec<String>, Captures)> {
        let uris: Vec<String> = name.components().map(|c| c.to_string()).collect();
        let subject = Subject { uris: &uris, budget: std::cell::Cell::new(MATCH_STEPS) };
        let starts = if self.anchored_start { 0..=0 } else { 0..=uris.len() };
        for start in starts {
            let mut caps = vec![None; self.groups];
            let end_ok = |pos: usize, _: &mut Captures| !self.anchored_end || pos == uris.len();
            if match_items(&self.items, &subject, start, &mut caps, &mut { end_ok }) {
                return Some((uris, caps));
            }
        }
        None
    }

    /// Whether `name` matches.
    pub fn is_match(&self, name: &Name) -> bool {
        self.captures(name).is_some()
    }

    /// Matches `name` and expands `template` — `\N` for group N's components, `<x>` for the
    /// literal component `x` — into a name; `None` when `name` does not match or a group named
    /// does not exist. An empty template gives the empty name.
    pub fn expand(&self, name: &Name, template: &str) -> Option<Name> {
        let (uris, caps) = self.captures(name)?;
        let mut out = String::new();
        let t = template.as_bytes();
        let mut i = 0;
        while i < t.len() {
            match t[i] {
                b'\\' => {
                    let digits: String = template[i + 1..].chars().take_while(char::is_ascii_digit).collect();
                    let n: usize = digits.parse().ok()?;
                    let (s, e) = (*caps.get(n.checked_sub(1)?)?)?;
                    for u in &uris[s..e] {
                        out.push('/');
                        out.push_str(u);
                    }
                    i += 1 + digits.len();
                }
                b'<' => {
                    let end = template[i..].find('>')? + i;
                    out.push('/');
                    out.push_str(&template[i + 1..end]);
                    i = end + 1;
                }
                c if c.is_ascii_whitespace() => i += 1,
                _ => return None,
            }
        }
        Name::from_uri(if out.is_empty() { "/" } else { &out }).ok()
    }
}

/// Component tests one match may make before it gives up (no match): the names come from the
/// network, and nested repetitions (`(<>*)*`) could otherwise backtrack for ever.
const MATCH_STEPS: u32 = 100_000;

/// A name's components (URI form) being matched, and the tests left to make.
struct Subject<'a> {
    uris: &'a [String],
    budget: std::cell::Cell<u32>,
}

impl Subject<'_> {
    /// Whether component `pos` exists and passes `test`, counting a step (none once the budget
    /// is spent).
    fn step(&self, pos: usize, test: impl FnOnce(&str) -> bool) -> bool {
        let left = self.budget.get();
        if left == 0 {
            return false;
        }
        self.budget.set(left - 1);
        self.uris.get(pos).is_some_and(|u| test(u))
    }
}

/// Matches `items` from component `pos`, then calls `rest` with where they ended; backtracks.
fn match_items(
    items: &[Item],
    s: &Subject<'_>,
    pos: usize,
    caps: &mut Captures,
    rest: &mut dyn FnMut(usize, &mut Captures) -> bool,
) -> bool {
    let Some((first, others)) = items.split_first() else { return rest(pos, caps) };
    repeat(first, 0, s, pos, caps, &mut |p, c| match_items(others, s, p, c, rest))
}

/// Matches `item` `done` times already, then at least to its minimum and greedily up to its
/// maximum, each time trying `rest` after.
fn repeat(
    item: &Item,
    done: usize,
    s: &Subject<'_>,
    pos: usize,
    caps: &mut Captures,
    rest: &mut dyn FnMut(usize, &mut Captures) -> bool,
) -> bool {
    if done < item.max {
        let mut more = |p: usize, c: &mut Captures| p != pos && repeat(item, done + 1, s, p, c, rest);
        if match_atom(&item.atom, s, pos, caps, &mut more) {
            return true;
        }
    }
    done >= item.min && rest(pos, caps)
}

fn match_atom(atom: &Atom, s: &Subject<'_>, pos: usize, caps: &mut Captures, rest: &mut dyn FnMut(usize, &mut Captures) -> bool) -> bool {
    match atom {
        Atom::Component(t) => s.step(pos, |u| t.matches(u)) && rest(pos + 1, caps),
        Atom::Set { negated, tests } => s.step(pos, |u| tests.iter().any(|t| t.matches(u)) != *negated) && rest(pos + 1, caps),
        Atom::Group { index, items } => {
            let saved = caps[*index];
            let mut close = |p: usize, c: &mut Captures| {
                let before = c[*index];
                c[*index] = Some((pos, p));
                rest(p, c) || {
                    c[*index] = before;
                    false
                }
            };
            match_items(items, s, pos, caps, &mut close) || {
                caps[*index] = saved;
                false
            }
        }
    }
}

struct Parser<'a> {
    text: &'a [u8],
    at: usize,
    groups: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    /// Items up to the end or a `)`.
    fn sequence(&mut self) -> Result<Vec<Item>, String> {
        let mut items = Vec::new();
        while let Some(c) = self.peek() {
            let atom = match c {
                b')' => break,
                b'<' => Atom::Component(self.component()?),
                b'[' => self.set()?,
                b'(' => {
                    self.at += 1;
                    let index = self.groups;
                    self.groups += 1;
                    let inner = self.sequence()?;
                    if self.peek() != Some(b')') {
                        return Err("a group is not closed".into());
                    }
                    self.at += 1;
                    Atom::Group { index, items: inner }
                }
                c if c.is_ascii_whitespace() => {
                    self.at += 1;
                    continue;
                }
                c => return Err(format!("unexpected {:?} at {}", c as char, self.at)),
            };
            let (min, max) = self.repetition()?;
            items.push(Item { atom, min, max });
        }
        Ok(items)
    }

    /// `<x>`: a component test.
    fn component(&mut self) -> Result<ComponentTest, String> {
        let rest = &self.text[self.at + 1..];
        let end = rest.iter().position(|&c| c == b'>').ok_or("a component is not closed with >")?;
        let inner = std::str::from_utf8(&rest[..end]).map_err(|e| e.to_string())?;
        self.at += end + 2;
        if inner.is_empty() {
            return Ok(ComponentTest::Any);
        }
        Regex::new(&format!("^(?:{inner})$")).map(ComponentTest::Matches).map_err(|e| format!("component <{inner}>: {e}"))
    }

    /// `[<a><b>]` or `[^<a>]`.
    fn set(&mut self) -> Result<Atom, String> {
        self.at += 1;
        let negated = self.peek() == Some(b'^');
        if negated {
            self.at += 1;
        }
        let mut tests = Vec::new();
        while self.peek() == Some(b'<') {
            tests.push(self.component()?);
        }
        if self.peek() != Some(b']') || tests.is_empty() {
            return Err("a set is [<a><b>…] or [^<a>…]".into());
        }
        self.at += 1;
        Ok(Atom::Set { negated, tests })
    }

    /// The repetition after an atom: (min, max).
    fn repetition(&mut self) -> Result<(usize, usize), String> {
        let r = match self.peek() {
            Some(b'*') => (0, usize::MAX),
            Some(b'+') => (1, usize::MAX),
            Some(b'?') => (0, 1),
            Some(b'{') => {
                let rest = &self.text[self.at + 1..];
                let end = rest.iter().position(|&c| c == b'}').ok_or("a repetition is not closed with }")?;
                let inner = std::str::from_utf8(&rest[..end]).map_err(|e| e.to_string())?;
                self.at += end + 1;
                let num = |s: &str, default: usize| {
                    let s = s.trim();
                    if s.is_empty() {
                        Ok(default)
                    } else {
                        s.parse().map_err(|_| format!("repetition {{{inner}}}"))
                    }
                };
                let (min, max) = match inner.split_once(',') {
                    Some((a, b)) => (num(a, 0)?, num(b, usize::MAX)?),
                    None => {
                        let n = num(inner, 0)?;
                        (n, n)
                    }
                };
                if min > max {
                    return Err(format!("repetition {{{inner}}}"));
                }
                (min, max)
            }
            _ => return Ok((1, 1)),
        };
        self.at += 1;
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(uri: &str) -> Name {
        Name::from_uri(uri).unwrap()
    }

    fn matches(pattern: &str, uri: &str) -> bool {
        NameRegex::new(pattern).unwrap().is_match(&name(uri))
    }

    #[test]
    fn nfd_sample_patterns() {
        let command = "^<localhop><nfd><rib>[<register><unregister>]<>{1,3}$";
        assert!(matches(command, "/localhop/nfd/rib/register/params"));
        assert!(matches(command, "/localhop/nfd/rib/unregister/a/b/c"));
        assert!(!matches(command, "/localhop/nfd/rib/register"));
        assert!(!matches(command, "/localhop/nfd/rib/announce/params"));
        assert!(!matches(command, "/localhop/nfd/rib/register/a/b/c/d"));
        let key = "^[^<KEY>]*<KEY><>{1,3}$";
        assert!(matches(key, "/ndn/edu/alice/KEY/id"));
        assert!(matches(key, "/ndn/edu/alice/KEY/id/issuer/v1"));
        assert!(!matches(key, "/ndn/KEY/a/b/c/d"));
        assert!(!matches(key, "/ndn/edu/alice"));
    }

    #[test]
    fn anchors_sets_and_repetitions() {
        assert!(matches("<b>", "/a/b/c"), "unanchored: anywhere");
        assert!(!matches("^<b>", "/a/b/c"));
        assert!(!matches("<b>$", "/a/b/c"));
        assert!(matches("^<a><>*$", "/a"));
        assert!(matches("^<a><>+$", "/a/x"));
        assert!(!matches("^<a><>+$", "/a"));
        assert!(matches("^<a>?<b>$", "/b"));
        assert!(matches("^<>{2,}$", "/x/y/z"));
        assert!(!matches("^<>{,1}$", "/x/y"));
        assert!(matches("^<ab.*><c|d>$", "/abz/d"));
        assert!(!matches("^<ab.*>$", "/xab"), "a component test matches the whole component");
        assert!(matches("^[^<a><b>]<>$", "/c/a"));
        assert!(!matches("^[^<a><b>]<>$", "/b/a"));
        assert!(matches("^(<a><b>)+$", "/a/b/a/b"));
        assert!(!matches("^(<a><b>)+$", "/a/b/a"));
    }

    #[test]
    fn groups_expand_into_names() {
        let r = NameRegex::new("^([^<KEY>]*)<KEY>(<>)<>{0,2}$").unwrap();
        assert_eq!(r.expand(&name("/ndn/edu/alice/KEY/k1/issuer/v3"), "\\1"), Some(name("/ndn/edu/alice")));
        assert_eq!(r.expand(&name("/ndn/edu/alice/KEY/k1"), "\\1<KEY>\\2"), Some(name("/ndn/edu/alice/KEY/k1")));
        assert_eq!(r.expand(&name("/no/key/here"), "\\1"), None);
        assert_eq!(r.expand(&name("/a/KEY/k"), "\\3"), None, "no third group");
        // A group inside a repetition keeps its last pass.
        let r = NameRegex::new("^(<>)*$").unwrap();
        assert_eq!(r.expand(&name("/x/y/z"), "\\1"), Some(name("/z")));
    }

    #[test]
    fn nested_repetitions_give_up_instead_of_running_away() {
        let long = format!("/{}", vec!["a"; 40].join("/"));
        let t0 = std::time::Instant::now();
        assert!(!matches("^(<>*)*<b>$", &long));
        assert!(t0.elapsed() < std::time::Duration::from_secs(5), "{:?}", t0.elapsed());
    }

    proptest::proptest! {
        /// Any pattern text compiles or says why, and any compiled pattern matches any name
        /// without a panic.
        #[test]
        fn any_pattern_and_name_never_panic(pattern in "[<>\\[\\]^$(){},*+?a-c0-9 ]{0,24}", comps in proptest::collection::vec("[a-c]{0,2}", 0..8)) {
            if let Ok(r) = NameRegex::new(&pattern) {
                let n = Name::from_uri(&format!("/{}", comps.join("/"))).unwrap_or_else(|_| Name::from_uri("/").unwrap());
                let _ = r.is_match(&n);
                let _ = r.expand(&n, "\\1<x>");
            }
        }
    }

    #[test]
    fn bad_patterns_say_why() {
        for bad in ["^<a", "[<a>", "(<a>", "<a>{3,1}", "<a>)", "x", "<(>"] {
            let e = NameRegex::new(bad).unwrap_err();
            assert_eq!(e.pattern, bad);
            assert!(!e.why.is_empty());
        }
    }
}
