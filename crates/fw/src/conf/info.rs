//! The INFO format (Boost's property tree) that NFD's `nfd.conf` and its validator rules are
//! written in: `key [value]` lines, blocks in braces, `;` comments, quoted values with escapes.
//!
//! # Overview
//! [`parse_info`] reads text into a tree of [`InfoNode`]s, each with its line, or an
//! [`InfoError`] naming the line of an unbalanced brace or an unclosed quote; [`info_text`]
//! writes a tree back as text that reads back to the same tree. What the keys mean is the
//! readers' (`crate::conf::nfd_conf`, `crate::mgmt::validator`).

/// INFO text that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {what}")]
pub struct InfoError {
    /// Its 1-based line.
    pub line: usize,
    /// What is wrong there.
    pub what: String,
}

/// One `key [value] [{ children }]` of an INFO file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InfoNode {
    /// The key.
    pub key: String,
    /// The value ("" when none).
    pub value: String,
    /// The block after it.
    pub children: Vec<InfoNode>,
    /// Its 1-based line.
    pub line: usize,
}

/// A token of an INFO file and its line.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(String, usize),
    Open(usize),
    Close(usize),
    /// The end of a line (a key's value stops there).
    Newline,
}

fn invalid(line: usize, what: impl std::fmt::Display) -> InfoError {
    InfoError { line, what: what.to_string() }
}

fn tokens(text: &str) -> Result<Vec<Token>, InfoError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let mut chars = line.char_indices().peekable();
        while let Some((_, c)) = chars.next() {
            match c {
                ';' => break,
                '{' => out.push(Token::Open(n)),
                '}' => out.push(Token::Close(n)),
                c if c.is_whitespace() => {}
                '"' => {
                    let mut word = String::new();
                    loop {
                        match chars.next() {
                            Some((_, '"')) => break,
                            Some((_, '\\')) => word.extend(chars.next().map(|(_, c)| unescape(c))),
                            Some((_, c)) => word.push(c),
                            None => return Err(invalid(n, "a quoted value is not closed")),
                        }
                    }
                    out.push(Token::Word(word, n));
                }
                first => {
                    // As Boost's reader: a word runs to white space or `;` (braces inside it,
                    // as in a regex's `<>{1,3}`, are its own), escapes expanded.
                    let mut word = String::new();
                    let mut c = Some(first);
                    while let Some(ch) = c {
                        if ch == '\\' {
                            word.extend(chars.next().map(|(_, e)| unescape(e)));
                        } else {
                            word.push(ch);
                        }
                        c = chars.next_if(|&(_, d)| !d.is_whitespace() && d != ';').map(|(_, d)| d);
                    }
                    out.push(Token::Word(word, n));
                }
            }
        }
        out.push(Token::Newline);
    }
    Ok(out)
}

/// The character an INFO escape `\\c` stands for (Boost's: `\\t`, `\\n`, `\\0`…; any other is
/// itself).
fn unescape(c: char) -> char {
    match c {
        't' => '\t',
        'n' => '\n',
        'r' => '\r',
        '0' => '\0',
        c => c,
    }
}

/// `nodes` written back as INFO text — values quoted, with escapes, where they hold white space,
/// quotes, backslashes or `;`, or are empty — which [`parse_info`] reads back to the same tree
/// (lines aside).
pub fn info_text(nodes: &[InfoNode]) -> String {
    fn write(out: &mut String, nodes: &[InfoNode], depth: usize) {
        for n in nodes {
            let indent = "  ".repeat(depth);
            out.push_str(&indent);
            out.push_str(&quoted(&n.key));
            if !n.value.is_empty() {
                out.push(' ');
                out.push_str(&quoted(&n.value));
            }
            out.push('\n');
            if !n.children.is_empty() {
                out.push_str(&format!("{indent}{{\n"));
                write(out, &n.children, depth + 1);
                out.push_str(&format!("{indent}}}\n"));
            }
        }
    }
    fn quoted(s: &str) -> String {
        let plain = !s.is_empty() && !s.starts_with(['{', '}']) && !s.chars().any(|c| c.is_whitespace() || matches!(c, '"' | '\\' | ';'));
        if plain {
            return s.to_string();
        }
        let mut q = String::from("\"");
        for c in s.chars() {
            match c {
                '"' | '\\' => {
                    q.push('\\');
                    q.push(c);
                }
                '\t' => q.push_str("\\t"),
                '\n' => q.push_str("\\n"),
                '\r' => q.push_str("\\r"),
                c => q.push(c),
            }
        }
        q.push('"');
        q
    }
    let mut out = String::new();
    write(&mut out, nodes, 0);
    out
}

/// Parses INFO text into its top-level nodes.
///
/// # Errors
/// [`InfoError`] naming the line of an unbalanced brace or an unclosed quote.
pub fn parse_info(text: &str) -> Result<Vec<InfoNode>, InfoError> {
    let tokens = tokens(text)?;
    let mut at = 0;
    let nodes = parse_block(&tokens, &mut at, None)?;
    Ok(nodes)
}

/// The nodes from `at` to the `}` that closes the block opened on line `opened` (or to the end).
fn parse_block(tokens: &[Token], at: &mut usize, opened: Option<usize>) -> Result<Vec<InfoNode>, InfoError> {
    let mut nodes: Vec<InfoNode> = Vec::new();
    while let Some(t) = tokens.get(*at) {
        *at += 1;
        match t {
            Token::Newline => {}
            Token::Close(n) => {
                return match opened {
                    Some(_) => Ok(nodes),
                    None => Err(invalid(*n, "a `}` closes no block")),
                }
            }
            Token::Open(n) => {
                // A block with no key of its own belongs to the key before it (NFD's style puts
                // the brace on the next line).
                let Some(last) = nodes.last_mut().filter(|l| l.children.is_empty()) else {
                    return Err(invalid(*n, "a `{` follows no key"));
                };
                last.children = parse_block(tokens, at, Some(*n))?;
            }
            Token::Word(key, n) => {
                let mut node = InfoNode { key: key.clone(), value: String::new(), children: Vec::new(), line: *n };
                if let Some(Token::Word(value, _)) = tokens.get(*at) {
                    node.value = value.clone();
                    *at += 1;
                }
                nodes.push(node);
            }
        }
    }
    match opened {
        Some(n) => Err(invalid(n, "this `{` is never closed")),
        None => Ok(nodes),
    }
}

/// `nodes` with every line set to 0: what two trees read from different texts compare by.
pub fn without_lines(nodes: &[InfoNode]) -> Vec<InfoNode> {
    nodes.iter().map(|n| InfoNode { line: 0, children: without_lines(&n.children), ..n.clone() }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_reads_keys_values_blocks_and_quotes() {
        let nodes = parse_info("a 1 ; note\nb\n{\n  c \"x y\"\n  d { e 2 }\n}\n").unwrap();
        assert_eq!(nodes.len(), 2);
        assert_eq!((nodes[0].key.as_str(), nodes[0].value.as_str(), nodes[0].line), ("a", "1", 1));
        assert_eq!(nodes[1].children[0].value, "x y");
        assert_eq!(nodes[1].children[1].children[0], InfoNode { key: "e".into(), value: "2".into(), children: vec![], line: 5 });
        for (bad, what) in
            [("a {\n b 1\n", "line 1: this `{` is never closed"), ("}\n", "line 1: a `}` closes no block"), ("a \"b\n", "line 1: a quoted")]
        {
            let e = parse_info(bad).unwrap_err().to_string();
            assert!(e.contains(what), "{bad:?}: {e}");
        }
    }

    #[test]
    fn info_text_reads_back_the_same_with_regexes_quotes_and_escapes() {
        let text = r#"rule
{
  id "Hyper Rule"
  for data
  filter
  {
    type name
    regex ^<localhop><nfd><rib>[<register><unregister>]<>{1,3}$
  }
  checker
  {
    type customized
    key-locator
    {
      type name
      hyper-relation
      {
        k-regex ^([^<KEY>]*)<KEY><>{1,3}$
        k-expand \\1
        h-relation is-prefix-of
        p-regex ^(<>*)$
        p-expand "\\1"
      }
    }
  }
}
"#;
        let nodes = parse_info(text).unwrap();
        let hyper = &nodes[0].children[3].children[1].children[1].children;
        assert_eq!(nodes[0].children[2].children[1].value, "^<localhop><nfd><rib>[<register><unregister>]<>{1,3}$", "braces inside a word");
        assert_eq!((hyper[1].value.as_str(), hyper[4].value.as_str()), ("\\1", "\\1"), "escapes, quoted or not");
        let again = parse_info(&info_text(&nodes)).unwrap();
        assert_eq!(without_lines(&again), without_lines(&nodes));
    }
}
