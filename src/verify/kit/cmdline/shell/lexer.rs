//! Lexing a shell script into simple commands: POSIX quoting, `$(…)`/`${…}`/backticks kept
//! whole, operators, redirections, here-documents and array assignments.

use super::error::ShellProblem;
use super::syntax::{Connector, Redirect};

/// A word of a command: its text with quotes removed, and as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Word {
    pub(super) text: String,
    pub(super) raw: String,
    /// Any part was quoted or escaped (a quoted `if` is not a keyword).
    pub(super) quoted: bool,
    /// `NAME=` written unquoted at the start: the length of NAME.
    pub(super) assign: Option<usize>,
    /// The elements of `NAME=(a b c)`.
    pub(super) array: Option<Vec<Word>>,
}

impl Word {
    /// A word that did not come through a shell (container argv at depth 0).
    pub(super) fn literal(text: &str) -> Word {
        let assign = text.find('=').filter(|&n| is_name(&text[..n]));
        Word {
            text: text.to_string(),
            raw: text.to_string(),
            quoted: false,
            assign,
            array: None,
        }
    }

    /// (`NAME`, value as written) for an assignment word.
    pub(super) fn assignment(&self) -> Option<(&str, &str)> {
        let n = self.assign?;
        let name = self.text.get(..n)?;
        let value_raw = self.raw.get(n + 1..)?;
        Some((name, value_raw))
    }
}

fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

#[derive(Debug, Clone)]
pub(super) struct RawCommand {
    pub(super) words: Vec<Word>,
    pub(super) redirects: Vec<Redirect>,
    pub(super) heredoc: Option<String>,
    pub(super) line: usize,
    pub(super) joined_by: Option<Connector>,
}

struct PendingHeredoc {
    command: usize,
    delimiter: String,
    strip_tabs: bool,
}

pub(super) struct Lexer {
    chars: Vec<char>,
    i: usize,
    line: usize,
}

impl Lexer {
    pub(super) fn new(script: &str) -> Lexer {
        Lexer {
            chars: script.chars().collect(),
            i: 0,
            line: 1,
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.i).copied()
    }

    fn peek_at(&self, k: usize) -> Option<char> {
        self.chars.get(self.i + k).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.i += 1;
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    pub(super) fn commands(mut self) -> Result<Vec<RawCommand>, ShellProblem> {
        let mut done: Vec<RawCommand> = Vec::new();
        let mut cur = self.empty_command(None);
        let mut pending: Vec<PendingHeredoc> = Vec::new();
        let mut next_join: Option<Connector> = None;
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\r' => {
                    self.bump();
                }
                '\\' if self.peek_at(1) == Some('\n') => {
                    self.bump();
                    self.bump();
                }
                '#' => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.bump();
                    }
                }
                '\n' => {
                    self.bump();
                    finish(&mut done, &mut cur, &mut next_join, Connector::Sequence);
                    cur = self.empty_command(next_join);
                    for h in pending.drain(..) {
                        let body = self.heredoc_body(&h.delimiter, h.strip_tabs);
                        if let Some(cmd) = done.get_mut(h.command) {
                            cmd.heredoc = Some(body);
                        }
                    }
                }
                ';' | '&' | '|' | '(' | ')' => {
                    if c == '&' && self.peek_at(1) == Some('>') {
                        self.redirect(&mut cur, None, &mut pending, done.len())?;
                        continue;
                    }
                    self.bump();
                    let join = match (c, self.peek()) {
                        ('&', Some('&')) => {
                            self.bump();
                            Connector::And
                        }
                        ('|', Some('|')) => {
                            self.bump();
                            Connector::Or
                        }
                        ('|', Some('&')) => {
                            self.bump();
                            Connector::Pipe
                        }
                        ('|', _) => Connector::Pipe,
                        ('&', _) => Connector::Background,
                        (';', Some(';' | '&')) => {
                            self.bump();
                            Connector::Sequence
                        }
                        _ => Connector::Sequence,
                    };
                    finish(&mut done, &mut cur, &mut next_join, join);
                    cur = self.empty_command(next_join);
                }
                '<' | '>' if self.peek_at(1) == Some('(') => {
                    let word = self.process_substitution()?;
                    cur.words.push(word);
                }
                '<' | '>' => self.redirect(&mut cur, None, &mut pending, done.len())?,
                c if c.is_ascii_digit() && self.fd_redirect_ahead() => {
                    let mut fd = String::new();
                    while let Some(d) = self.peek().filter(char::is_ascii_digit) {
                        fd.push(d);
                        self.bump();
                    }
                    self.redirect(&mut cur, fd.parse().ok(), &mut pending, done.len())?;
                }
                _ => {
                    let word = self.word()?;
                    if cur.words.is_empty() && cur.redirects.is_empty() {
                        cur.line = self.line_of_word(&word);
                    }
                    cur.words.push(word);
                }
            }
        }
        finish(&mut done, &mut cur, &mut next_join, Connector::Sequence);
        Ok(done)
    }

    fn line_of_word(&self, word: &Word) -> usize {
        self.line - word.raw.matches('\n').count()
    }

    fn empty_command(&self, joined_by: Option<Connector>) -> RawCommand {
        RawCommand {
            words: Vec::new(),
            redirects: Vec::new(),
            heredoc: None,
            line: self.line,
            joined_by,
        }
    }

    /// Digits immediately followed by `<` or `>` (`2>&1`).
    fn fd_redirect_ahead(&self) -> bool {
        let mut k = 0;
        while self.peek_at(k).is_some_and(|c| c.is_ascii_digit()) {
            k += 1;
        }
        matches!(self.peek_at(k), Some('<' | '>'))
    }

    fn redirect(
        &mut self,
        cur: &mut RawCommand,
        fd: Option<u32>,
        pending: &mut Vec<PendingHeredoc>,
        command_index: usize,
    ) -> Result<(), ShellProblem> {
        const OPS: &[&str] = &[
            "&>>", "<<<", "<<-", "&>", ">>", ">|", ">&", "<<", "<>", "<&", ">", "<",
        ];
        let line = self.line;
        let op = OPS
            .iter()
            .find(|op| {
                op.chars()
                    .enumerate()
                    .all(|(k, c)| self.peek_at(k) == Some(c))
            })
            .copied()
            .unwrap_or(">");
        for _ in 0..op.chars().count() {
            self.bump();
        }
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.bump();
        }
        let starts_word = self
            .peek()
            .is_some_and(|c| !matches!(c, '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>'));
        if !starts_word {
            return Err(ShellProblem::RedirectWithoutTarget {
                op: op.to_string(),
                line,
            });
        }
        let target = self.word()?;
        if op == "<<" || op == "<<-" {
            pending.push(PendingHeredoc {
                command: command_index,
                delimiter: target.text.clone(),
                strip_tabs: op == "<<-",
            });
        }
        cur.redirects.push(Redirect {
            fd,
            op: op.to_string(),
            target: target.text,
        });
        Ok(())
    }

    /// Lines up to the delimiter line (or the end of the script, which bash accepts with a
    /// warning).
    fn heredoc_body(&mut self, delimiter: &str, strip_tabs: bool) -> String {
        let mut body = String::new();
        while self.peek().is_some() {
            let mut line = String::new();
            while let Some(c) = self.peek() {
                self.bump();
                if c == '\n' {
                    break;
                }
                line.push(c);
            }
            let line = if strip_tabs {
                line.trim_start_matches('\t').to_string()
            } else {
                line
            };
            if line == delimiter {
                break;
            }
            body.push_str(&line);
            body.push('\n');
        }
        body
    }

    /// One word: up to an unquoted blank or operator.
    fn word(&mut self) -> Result<Word, ShellProblem> {
        let start = self.i;
        let mut text = String::new();
        let mut quoted = false;
        let mut assign = None;
        let mut name_so_far = true;
        let mut array = None;
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>' => break,
                '\\' => {
                    self.bump();
                    match self.bump() {
                        Some('\n') => {}
                        Some(n) => {
                            text.push(n);
                            quoted = true;
                        }
                        None => text.push('\\'),
                    }
                    name_so_far = false;
                }
                '\'' => {
                    let line = self.line;
                    self.bump();
                    quoted = true;
                    name_so_far = false;
                    loop {
                        match self.bump() {
                            Some('\'') => break,
                            Some(q) => text.push(q),
                            None => return Err(ShellProblem::UnclosedQuote { quote: '\'', line }),
                        }
                    }
                }
                '"' => {
                    self.double_quoted(&mut text)?;
                    quoted = true;
                    name_so_far = false;
                }
                '$' => {
                    self.dollar(&mut text)?;
                    name_so_far = false;
                }
                '`' => {
                    self.backtick(&mut text)?;
                    name_so_far = false;
                }
                '=' if assign.is_none() && name_so_far => {
                    self.bump();
                    if is_name(&text) {
                        assign = Some(text.len());
                        // `NAME=(a b c)`: an array assignment.
                        if self.peek() == Some('(') {
                            array = Some(self.array()?);
                        }
                    }
                    text.push('=');
                    name_so_far = false;
                }
                c => {
                    self.bump();
                    if !(c == '_' || c.is_ascii_alphanumeric()) {
                        name_so_far = false;
                    }
                    text.push(c);
                }
            }
        }
        let raw: String = self
            .chars
            .get(start..self.i)
            .unwrap_or_default()
            .iter()
            .collect();
        let text = match &array {
            Some(items) => {
                let mut t = text;
                let joined: Vec<&str> = items.iter().map(|w| w.text.as_str()).collect();
                t.push_str(&joined.join(" "));
                t
            }
            None => text,
        };
        Ok(Word {
            text,
            raw,
            quoted,
            assign,
            array,
        })
    }

    /// The words of `(a b c)` after `NAME=`; newlines and comments allowed inside.
    fn array(&mut self) -> Result<Vec<Word>, ShellProblem> {
        let line = self.line;
        self.bump(); // (
        let mut items = Vec::new();
        loop {
            match self.peek() {
                None => {
                    return Err(ShellProblem::UnclosedSubstitution {
                        open: "array (",
                        line,
                    })
                }
                Some(')') => {
                    self.bump();
                    return Ok(items);
                }
                Some(' ' | '\t' | '\r' | '\n') => {
                    self.bump();
                }
                Some('\\') if self.peek_at(1) == Some('\n') => {
                    self.bump();
                    self.bump();
                }
                Some('#') => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.bump();
                    }
                }
                Some(';' | '&' | '|' | '(' | '<' | '>') => {
                    // Not valid in an array literal; read it as text so lexing goes on.
                    self.bump();
                }
                Some(_) => items.push(self.word()?),
            }
        }
    }

    fn double_quoted(&mut self, text: &mut String) -> Result<(), ShellProblem> {
        let line = self.line;
        self.bump(); // "
        loop {
            match self.peek() {
                None => return Err(ShellProblem::UnclosedQuote { quote: '"', line }),
                Some('"') => {
                    self.bump();
                    return Ok(());
                }
                Some('\\') => {
                    self.bump();
                    match self.bump() {
                        Some(n @ ('$' | '`' | '"' | '\\')) => text.push(n),
                        Some('\n') => {}
                        Some(n) => {
                            text.push('\\');
                            text.push(n);
                        }
                        None => return Err(ShellProblem::UnclosedQuote { quote: '"', line }),
                    }
                }
                Some('$') => self.dollar(text)?,
                Some('`') => self.backtick(text)?,
                Some(c) => {
                    self.bump();
                    text.push(c);
                }
            }
        }
    }

    /// `$(…)`, `$((…))`, `${…}` kept whole; a plain `$NAME` is read as ordinary text.
    fn dollar(&mut self, text: &mut String) -> Result<(), ShellProblem> {
        let line = self.line;
        let (open, end) = match self.peek_at(1) {
            Some('(') => ("$(", find_paren_end(&self.chars, self.i + 1)),
            Some('{') => ("${", find_brace_end(&self.chars, self.i + 1)),
            _ => {
                self.bump();
                text.push('$');
                return Ok(());
            }
        };
        let Some(end) = end else {
            return Err(ShellProblem::UnclosedSubstitution { open, line });
        };
        while self.i <= end {
            match self.bump() {
                Some(c) => text.push(c),
                None => break,
            }
        }
        Ok(())
    }

    /// `<(cmd)` / `>(cmd)`: one word, kept as written.
    fn process_substitution(&mut self) -> Result<Word, ShellProblem> {
        let line = self.line;
        let open = if self.peek() == Some('<') { "<(" } else { ">(" };
        let Some(end) = find_paren_end(&self.chars, self.i + 1) else {
            return Err(ShellProblem::UnclosedSubstitution { open, line });
        };
        let mut text = String::new();
        while self.i <= end {
            match self.bump() {
                Some(c) => text.push(c),
                None => break,
            }
        }
        Ok(Word {
            raw: text.clone(),
            text,
            quoted: true,
            assign: None,
            array: None,
        })
    }

    fn backtick(&mut self, text: &mut String) -> Result<(), ShellProblem> {
        let line = self.line;
        let Some(end) = find_backtick_end(&self.chars, self.i + 1) else {
            return Err(ShellProblem::UnclosedSubstitution { open: "`", line });
        };
        while self.i <= end {
            match self.bump() {
                Some(c) => text.push(c),
                None => break,
            }
        }
        Ok(())
    }
}

/// Closes the current command (if it has anything) and remembers how the next one is joined.
fn finish(
    done: &mut Vec<RawCommand>,
    cur: &mut RawCommand,
    next_join: &mut Option<Connector>,
    join: Connector,
) {
    if cur.words.is_empty() && cur.redirects.is_empty() {
        // A blank line or `a &&` + newline: a newline keeps the connector already seen.
        if !done.is_empty() && join != Connector::Sequence {
            *next_join = Some(join);
        }
        return;
    }
    let line = cur.line;
    let cmd = std::mem::replace(
        cur,
        RawCommand {
            words: Vec::new(),
            redirects: Vec::new(),
            heredoc: None,
            line,
            joined_by: None,
        },
    );
    done.push(cmd);
    *next_join = Some(join);
}

/// Index of the `)` closing the `(` at `open`, skipping quotes and nested parentheses.
pub(super) fn find_paren_end(chars: &[char], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = open;
    while let Some(&c) = chars.get(i) {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(i);
                }
            }
            '\\' => i += 1,
            '\'' => i = find_char(chars, i + 1, '\'')?,
            '"' => i = find_dq_end(chars, i + 1)?,
            '`' => i = find_backtick_end(chars, i + 1)?,
            _ => {}
        }
        i += 1;
    }
    None
}

/// Index of the `}` closing the `{` at `open`.
pub(super) fn find_brace_end(chars: &[char], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = open;
    while let Some(&c) = chars.get(i) {
        match c {
            '{' => depth += 1,
            '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(i);
                }
            }
            '\\' => i += 1,
            '\'' => i = find_char(chars, i + 1, '\'')?,
            '"' => i = find_dq_end(chars, i + 1)?,
            _ => {}
        }
        i += 1;
    }
    None
}

fn find_char(chars: &[char], from: usize, want: char) -> Option<usize> {
    (from..chars.len()).find(|&k| chars.get(k) == Some(&want))
}

/// Index of the `"` closing a double-quoted string whose body starts at `from`.
fn find_dq_end(chars: &[char], from: usize) -> Option<usize> {
    let mut i = from;
    while let Some(&c) = chars.get(i) {
        match c {
            '\\' => i += 1,
            '"' => return Some(i),
            '$' if chars.get(i + 1) == Some(&'(') => i = find_paren_end(chars, i + 1)?,
            '`' => i = find_backtick_end(chars, i + 1)?,
            _ => {}
        }
        i += 1;
    }
    None
}

pub(super) fn find_backtick_end(chars: &[char], from: usize) -> Option<usize> {
    let mut i = from;
    while let Some(&c) = chars.get(i) {
        match c {
            '\\' => i += 1,
            '`' => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}
