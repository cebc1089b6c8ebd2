//! The JSON reader for client messages.
//!
//! One pass over an input line builds a compact tree (a `Vec` of nodes in
//! document order) that keeps what R and MCP need and serde's `Value` loses or
//! refuses:
//! - numbers keep their exact text, so request ids of any size compare exactly
//!   and `1e400` can still reach R (as `Inf`, which is what jsonlite reads);
//! - a lone UTF-16 surrogate escape (`"\ud800"`) becomes U+FFFD instead of
//!   failing the whole message;
//! - a string holding `\u0000` is kept and flagged, so the R bridge can refuse
//!   that one argument by name (R strings cannot hold NUL);
//! - nesting of any depth is read without recursion; below [`MAX_TREE_DEPTH`]
//!   a container is kept only as a [`Kind::Deep`] marker, so a hostile line
//!   cannot exhaust the stack or memory, and the error can say what is wrong.
//!
//! Duplicate object keys are all kept, in order; [`Val::get`] answers the last
//! one, as JavaScript's `JSON.parse` and serde do.

use std::fmt;

/// Containers nested deeper than this are kept as [`Kind::Deep`] markers.
/// Tool arguments may nest [`crate::r::MAX_ARG_DEPTH`] levels below
/// `params.arguments`, which sits at depth 3.
pub const MAX_TREE_DEPTH: usize = 1024;

/// What a node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Null,
    True,
    False,
    Number,
    String,
    Array,
    Object,
    /// A container nested deeper than [`MAX_TREE_DEPTH`]: valid JSON, not kept.
    Deep,
}

const IN_ARENA: u8 = 1;
const HAS_NUL: u8 = 2;

#[derive(Clone, Copy, Debug)]
struct Node {
    kind: Kind,
    flags: u8,
    /// The node's bytes in the line (for containers, from bracket to bracket).
    src: (u32, u32),
    /// Strings: (offset, length) of the decoded text, in the line (no escapes)
    /// or in the arena. Containers: (number of items or members, unused).
    a: u32,
    b: u32,
    /// Index of the node after this one's subtree.
    next: u32,
}

/// Why a line is not JSON.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseError {
    NotUtf8 { at: usize },
    Syntax { at: usize, what: &'static str },
    TooLarge,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::NotUtf8 { at } => write!(f, "input is not valid UTF-8 (byte {at})"),
            ParseError::Syntax { at, what } => write!(f, "{what} at byte {at}"),
            ParseError::TooLarge => f.write_str("the message is larger than 4 GB"),
        }
    }
}

/// A parsed line: its bytes, decoded strings that needed unescaping, and the
/// node tree. The root is node 0.
pub struct Doc {
    line: Vec<u8>,
    arena: Vec<u8>,
    nodes: Vec<Node>,
}

impl fmt::Debug for Doc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Doc({})", String::from_utf8_lossy(&self.line))
    }
}

impl Doc {
    /// Parse one message. The bytes become part of the document.
    pub fn parse(line: Vec<u8>) -> Result<Doc, ParseError> {
        Doc::try_parse(line).map_err(|(e, _)| e)
    }

    /// [`Doc::parse`], handing the bytes back when they are not JSON.
    pub fn try_parse(line: Vec<u8>) -> Result<Doc, (ParseError, Vec<u8>)> {
        if line.len() >= u32::MAX as usize {
            return Err((ParseError::TooLarge, line));
        }
        if let Err(e) = std::str::from_utf8(&line) {
            return Err((ParseError::NotUtf8 { at: e.valid_up_to() }, line));
        }
        match Parser::<false>::new(&line).run() {
            Ok((nodes, arena)) => Ok(Doc { line, arena, nodes }),
            Err(e) => Err((e, line)),
        }
    }

    pub fn root(&self) -> Val<'_> {
        Val { doc: self, i: 0 }
    }

    /// The whole line as received.
    pub fn text(&self) -> &[u8] {
        &self.line
    }

    /// Bytes of memory the document holds (line, decoded strings, nodes).
    pub fn heap_size(&self) -> usize {
        self.line.capacity() + self.arena.capacity() + self.nodes.capacity() * std::mem::size_of::<Node>()
    }
}

/// A borrowed view of one node.
#[derive(Clone, Copy)]
pub struct Val<'d> {
    doc: &'d Doc,
    i: usize,
}

impl fmt::Debug for Val<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", String::from_utf8_lossy(self.raw()))
    }
}

impl<'d> Val<'d> {
    fn node(&self) -> &'d Node {
        &self.doc.nodes[self.i]
    }

    pub fn kind(&self) -> Kind {
        self.node().kind
    }

    pub fn is_object(&self) -> bool {
        self.kind() == Kind::Object
    }

    pub fn is_string(&self) -> bool {
        self.kind() == Kind::String
    }

    /// Where this value's bytes are in the message.
    pub fn span(&self) -> std::ops::Range<usize> {
        let (s, e) = self.node().src;
        s as usize..e as usize
    }

    /// The exact bytes of this value in the message.
    pub fn raw(&self) -> &'d [u8] {
        let (s, e) = self.node().src;
        &self.doc.line[s as usize..e as usize]
    }

    /// The exact text of this value in the message (the line is valid UTF-8).
    pub fn raw_str(&self) -> &'d str {
        std::str::from_utf8(self.raw()).unwrap_or("")
    }

    /// The decoded text of a string (lone surrogates already replaced).
    pub fn as_str(&self) -> Option<&'d str> {
        // Both sources hold valid UTF-8 by construction.
        self.string_bytes().and_then(|bytes| std::str::from_utf8(bytes).ok())
    }

    /// [`Val::as_str`]'s bytes, not checked again: what a key is compared by.
    fn string_bytes(&self) -> Option<&'d [u8]> {
        let n = self.node();
        if n.kind != Kind::String {
            return None;
        }
        let src = if n.flags & IN_ARENA != 0 { &self.doc.arena } else { &self.doc.line };
        Some(&src[n.a as usize..(n.a + n.b) as usize])
    }

    /// Whether a string holds a NUL character (`\u0000`).
    pub fn has_nul(&self) -> bool {
        self.node().flags & HAS_NUL != 0
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self.kind() {
            Kind::True => Some(true),
            Kind::False => Some(false),
            _ => None,
        }
    }

    /// The number's text, exactly as sent.
    pub fn number_text(&self) -> Option<&'d str> {
        (self.kind() == Kind::Number).then(|| self.raw_str())
    }

    /// Items of an array, members' values of an object, in order.
    pub fn len(&self) -> usize {
        match self.kind() {
            Kind::Array | Kind::Object => self.node().a as usize,
            _ => 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The items of an array (empty for anything else).
    pub fn items(&self) -> Children<'d> {
        let n = self.node();
        let end = if n.kind == Kind::Array { n.next as usize } else { self.i + 1 };
        Children { doc: self.doc, i: self.i + 1, end }
    }

    /// The `(key, value)` members of an object, in order, duplicates included.
    pub fn members(&self) -> Members<'d> {
        let n = self.node();
        let end = if n.kind == Kind::Object { n.next as usize } else { self.i + 1 };
        Members { inner: Children { doc: self.doc, i: self.i + 1, end } }
    }

    /// The value of member `key` of an object (the last one if repeated).
    pub fn get(&self, key: &str) -> Option<Val<'d>> {
        let mut found = None;
        for (k, v) in self.members() {
            // Bytes: a message's every lookup compares every key.
            if k.string_bytes() == Some(key.as_bytes()) {
                found = Some(v);
            }
        }
        found
    }

    /// A serde value of this subtree, for small parts echoed back (error data).
    /// Deep markers become `null`; numbers serde cannot hold become their text.
    pub fn to_value(&self) -> serde_json::Value {
        use serde_json::Value;
        match self.kind() {
            Kind::Null | Kind::Deep => Value::Null,
            Kind::True => Value::Bool(true),
            Kind::False => Value::Bool(false),
            Kind::Number => serde_json::from_str::<serde_json::Number>(self.raw_str())
                .map(Value::Number)
                .unwrap_or_else(|_| Value::String(self.raw_str().to_string())),
            Kind::String => Value::String(self.as_str().unwrap_or("").to_string()),
            Kind::Array => Value::Array(self.items().map(|v| v.to_value()).collect()),
            Kind::Object => {
                let mut map = serde_json::Map::new();
                for (k, v) in self.members() {
                    map.insert(k.as_str().unwrap_or("").to_string(), v.to_value());
                }
                Value::Object(map)
            }
        }
    }

    /// Whether containers nest more than `limit` levels deep here (this
    /// value counting as the first level).
    pub fn nests_deeper_than(&self, limit: usize) -> bool {
        // Ends of the open containers, innermost last.
        let mut open: Vec<usize> = Vec::new();
        let end = self.node().next as usize;
        for i in self.i..end {
            while open.last().is_some_and(|&e| e <= i) {
                open.pop();
            }
            let n = &self.doc.nodes[i];
            match n.kind {
                Kind::Deep => return true,
                Kind::Array | Kind::Object => {
                    open.push(n.next as usize);
                    if open.len() > limit {
                        return true;
                    }
                }
                _ => {}
            }
        }
        false
    }

    /// Whether this subtree holds containers beyond [`MAX_TREE_DEPTH`].
    pub fn contains_deep(&self) -> bool {
        let end = self.node().next as usize;
        self.doc.nodes[self.i..end].iter().any(|n| n.kind == Kind::Deep)
    }
}

/// Iterator over sibling nodes.
pub struct Children<'d> {
    doc: &'d Doc,
    i: usize,
    end: usize,
}

impl<'d> Iterator for Children<'d> {
    type Item = Val<'d>;
    fn next(&mut self) -> Option<Val<'d>> {
        if self.i >= self.end {
            return None;
        }
        let v = Val { doc: self.doc, i: self.i };
        self.i = self.doc.nodes[self.i].next as usize;
        Some(v)
    }
}

/// Iterator over object members.
pub struct Members<'d> {
    inner: Children<'d>,
}

impl<'d> Iterator for Members<'d> {
    type Item = (Val<'d>, Val<'d>);
    fn next(&mut self) -> Option<Self::Item> {
        let k = self.inner.next()?;
        let v = self.inner.next()?;
        Some((k, v))
    }
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// The position of the first byte at or after `i` that is `"`, `\` or below
/// 0x20 (`b.len()` if none): string bodies are scanned eight bytes at a
/// time, the last few byte by byte.
#[inline]
fn skip_plain(b: &[u8], mut i: usize) -> usize {
    while i + 8 <= b.len() {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[i..i + 8]);
        let w = u64::from_le_bytes(w);
        // High bit of each byte below 0x20, equal to '"' or equal to '\'; the
        // lowest set bit is exact (higher ones may be borrow artefacts).
        let q = w ^ (b'"' as u64 * LO);
        let bs = w ^ (b'\\' as u64 * LO);
        let stops =
            (w.wrapping_sub(0x20 * LO) & !w & HI) | (q.wrapping_sub(LO) & !q & HI) | (bs.wrapping_sub(LO) & !bs & HI);
        if stops != 0 {
            return i + (stops.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while b.get(i).is_some_and(|&c| c >= 0x20 && c != b'"' && c != b'\\') {
        i += 1;
    }
    i
}

/// Four hex digits at `at`.
#[inline]
fn hex4_at(b: &[u8], at: usize) -> Option<u32> {
    let h = b.get(at..at + 4)?;
    let mut v = 0u32;
    for &c in h {
        v = v * 16 + (c as char).to_digit(16)?;
    }
    Some(v)
}

/// The end of a string body that is not kept, from `i`, the stop
/// [`skip_plain`] found in it (its first backslash: read at once, not scanned
/// for again); `start` is the opening quote. The
/// decoding path's checks, without decoding; in `compact` text a lone
/// surrogate escape is an error (the text is passed on as it is, and some
/// readers refuse it), where a client's message reads it as U+FFFD.
fn skip_escaped(b: &[u8], mut i: usize, start: usize, compact: bool) -> Result<usize, ParseError> {
    loop {
        match b.get(i) {
            None => return Err(err(start, "unterminated string")),
            Some(b'"') => return Ok(i + 1),
            Some(b'\\') => match b.get(i + 1) {
                Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => i += 2,
                Some(b'u') => {
                    let hi = hex4_at(b, i + 2).ok_or_else(|| err(i, "invalid \\u escape in a string"))?;
                    let paired = (0xD800..0xDC00).contains(&hi)
                        && b.get(i + 6..i + 8) == Some(b"\\u")
                        && hex4_at(b, i + 8).is_some_and(|lo| (0xDC00..0xE000).contains(&lo));
                    if paired {
                        i += 12;
                    } else if (0xD800..0xE000).contains(&hi) && compact {
                        return Err(err(i, "a lone UTF-16 surrogate escape"));
                    } else {
                        i += 6;
                    }
                }
                Some(_) => return Err(err(i, "invalid escape in a string")),
                None => return Err(err(start, "unterminated string")),
            },
            Some(_) => return Err(err(i, "raw control character in a string")),
        }
        i = skip_plain(b, i);
    }
}

/// Checks that `bytes` is one compact JSON value, as the payload serializer
/// writes it: the reader's grammar, with nothing before or after the value,
/// no whitespace outside strings, no lone surrogate escape and at most
/// `max_depth` nested arrays and objects. For JSON text an R object carries
/// that R code may have edited (`structured_json`); nothing is kept.
pub fn check_compact(bytes: &[u8], max_depth: usize) -> Result<(), ParseError> {
    if bytes.len() >= u32::MAX as usize {
        return Err(ParseError::TooLarge);
    }
    std::str::from_utf8(bytes).map_err(|e| ParseError::NotUtf8 { at: e.valid_up_to() })?;
    let mut p = Parser::<true>::new(bytes);
    p.limit = max_depth;
    p.run().map(|_| ())
}

/// A container being read: where its node is and whether it is an object.
struct Open {
    node: u32,
    object: bool,
}

/// The reader. `COMPACT`: checking compact JSON ([`check_compact`]); nothing
/// is kept (every container is read as deep), whitespace outside strings and
/// lone surrogate escapes are errors. A const parameter, so that the check is
/// the same code compiled without the keeping mode's work.
struct Parser<'a, const COMPACT: bool> {
    b: &'a [u8],
    /// The position while a string is decoded into the arena (elsewhere
    /// positions are passed and returned, so they stay in registers).
    pos: usize,
    nodes: Vec<Node>,
    arena: Vec<u8>,
    open: Vec<Open>,
    /// Containers below the depth limit: one bit per level (1 = object), and
    /// the index of the Deep marker that stands for all of them.
    deep: Vec<u64>,
    deep_len: usize,
    deep_node: u32,
    /// Compact mode's depth limit.
    limit: usize,
}

fn err(at: usize, what: &'static str) -> ParseError {
    ParseError::Syntax { at, what }
}

fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

impl<'a, const COMPACT: bool> Parser<'a, COMPACT> {
    fn new(b: &'a [u8]) -> Self {
        Parser {
            b,
            pos: 0,
            nodes: if COMPACT { Vec::new() } else { Vec::with_capacity(16) },
            arena: Vec::new(),
            open: Vec::new(),
            deep: Vec::new(),
            deep_len: 0,
            deep_node: 0,
            limit: usize::MAX,
        }
    }

    /// Where the next token starts, from `at`. Compact text has no
    /// whitespace to skip; where it stands instead of a token,
    /// [`Self::unexpected`] names it.
    #[inline(always)]
    fn ws(&self, mut at: usize) -> usize {
        if !COMPACT {
            while self.b.get(at).is_some_and(|&c| is_ws(c)) {
                at += 1;
            }
        }
        at
    }

    /// The error for what stands at `at` where the grammar wants `what`.
    #[cold]
    fn unexpected(&self, at: usize, what: &'static str) -> ParseError {
        match self.b.get(at) {
            None => err(at, "unexpected end of input"),
            Some(&c) if COMPACT && is_ws(c) => err(at, "whitespace outside a string (compact JSON has none)"),
            Some(_) => err(at, what),
        }
    }

    /// Nothing is kept here: compact mode, or below the depth limit.
    #[inline(always)]
    fn in_deep(&self) -> bool {
        COMPACT || self.deep_len > 0
    }

    /// Whether the innermost open container is an object (`None` at top level).
    #[inline]
    fn top_is_object(&self) -> Option<bool> {
        if self.deep_len > 0 {
            let i = self.deep_len - 1;
            return Some(self.deep[i / 64] >> (i % 64) & 1 == 1);
        }
        self.open.last().map(|o| o.object)
    }

    fn push_node(&mut self, kind: Kind, start: usize) -> u32 {
        let i = self.nodes.len() as u32;
        self.nodes.push(Node { kind, flags: 0, src: (start as u32, start as u32), a: 0, b: 0, next: i + 1 });
        i
    }

    /// A value just ended: count it in its container.
    #[inline]
    fn completed(&mut self) {
        if !self.in_deep() {
            if let Some(o) = self.open.last() {
                let n = o.node as usize;
                if !o.object {
                    self.nodes[n].a += 1;
                }
            }
        }
    }

    /// One loop over values: each value's arm is followed at once by what may
    /// come after it (a comma, closing brackets, the end), so no state is
    /// dispatched on between tokens.
    fn run(mut self) -> Result<(Vec<Node>, Vec<u8>), ParseError> {
        let b = self.b;
        // Whether the innermost open container is an object (`None` at top level).
        let mut object: Option<bool> = None;
        let mut pos = self.ws(0);
        'value: loop {
            // A value starts at `pos`.
            let Some(&c) = b.get(pos) else {
                return Err(err(pos, if object.is_none() { "no JSON value" } else { "unexpected end of input" }));
            };
            match c {
                b'{' | b'[' => {
                    let obj = c == b'{';
                    self.open_container(obj, pos)?;
                    object = Some(obj);
                    pos = self.ws(pos + 1);
                    if b.get(pos) != Some(if obj { &b'}' } else { &b']' }) {
                        if obj {
                            pos = self.key(pos)?;
                        }
                        continue 'value;
                    }
                    // Empty: closed below, as after any value.
                }
                b'"' => {
                    pos = self.string(pos)?;
                    self.completed();
                }
                b't' => pos = self.literal(pos, b"true", Kind::True)?,
                b'f' => pos = self.literal(pos, b"false", Kind::False)?,
                b'n' => pos = self.literal(pos, b"null", Kind::Null)?,
                b'-' | b'0'..=b'9' => pos = self.number(pos)?,
                _ => return Err(self.unexpected(pos, "expected a JSON value")),
            }
            // A value ended (or a container is empty) before `pos`: a comma, a
            // closing bracket, or at top level the end of the input follows.
            loop {
                pos = self.ws(pos);
                let Some(obj) = object else {
                    return if pos == b.len() {
                        Ok((self.nodes, self.arena))
                    } else {
                        Err(self.unexpected(pos, "unexpected data after the JSON value"))
                    };
                };
                match b.get(pos) {
                    Some(b',') => {
                        pos = self.ws(pos + 1);
                        if obj {
                            pos = self.key(pos)?;
                        }
                        continue 'value;
                    }
                    Some(b']') if !obj => {}
                    Some(b'}') if obj => {}
                    _ => {
                        let what =
                            if obj { "expected ',' or '}' in an object" } else { "expected ',' or ']' in an array" };
                        return Err(self.unexpected(pos, what));
                    }
                }
                self.close(pos);
                pos += 1;
                object = self.top_is_object();
            }
        }
    }

    /// An object's key at `at` and the colon after it, the key counted as a
    /// member. Returns where the value starts.
    #[inline]
    fn key(&mut self, at: usize) -> Result<usize, ParseError> {
        if self.b.get(at) != Some(&b'"') {
            return Err(self.unexpected(at, "expected a string key in an object"));
        }
        let end = self.string(at)?;
        if !self.in_deep() {
            if let Some(o) = self.open.last() {
                self.nodes[o.node as usize].a += 1;
            }
        }
        let colon = self.ws(end);
        if self.b.get(colon) != Some(&b':') {
            return Err(self.unexpected(colon, "expected ':' after an object key"));
        }
        Ok(self.ws(colon + 1))
    }

    fn open_container(&mut self, object: bool, at: usize) -> Result<(), ParseError> {
        if COMPACT && self.deep_len >= self.limit {
            return Err(err(at, "nested deeper than the serializer's limit"));
        }
        if self.in_deep() || self.open.len() >= MAX_TREE_DEPTH {
            if !COMPACT && self.deep_len == 0 {
                self.deep_node = self.push_node(Kind::Deep, at);
            }
            let i = self.deep_len;
            if i / 64 >= self.deep.len() {
                self.deep.push(0);
            }
            if object {
                self.deep[i / 64] |= 1 << (i % 64);
            } else {
                self.deep[i / 64] &= !(1 << (i % 64));
            }
            self.deep_len += 1;
            return Ok(());
        }
        let node = self.push_node(if object { Kind::Object } else { Kind::Array }, at);
        self.open.push(Open { node, object });
        Ok(())
    }

    /// `at` is the closing bracket's position.
    fn close(&mut self, at: usize) {
        if self.deep_len > 0 {
            self.deep_len -= 1;
            // Compact mode has no marker node.
            if self.deep_len == 0 && !COMPACT {
                let n = &mut self.nodes[self.deep_node as usize];
                n.src.1 = at as u32 + 1;
                self.completed();
            }
            return;
        }
        if let Some(o) = self.open.pop() {
            let next = self.nodes.len() as u32;
            let n = &mut self.nodes[o.node as usize];
            n.src.1 = at as u32 + 1;
            n.next = next;
            self.completed();
        }
    }

    /// A literal at `at`; returns its end.
    #[inline]
    fn literal<const N: usize>(&mut self, at: usize, word: &[u8; N], kind: Kind) -> Result<usize, ParseError> {
        // A fixed-size comparison: no call to memcmp for four or five bytes.
        if self.b.get(at..at + N) != Some(&word[..]) {
            return Err(err(at, "expected a JSON value"));
        }
        let end = at + N;
        if !self.in_deep() {
            let i = self.push_node(kind, at);
            self.nodes[i as usize].src.1 = end as u32;
            self.completed();
        }
        Ok(end)
    }

    /// A number at `start`; returns its end.
    #[inline]
    fn number(&mut self, start: usize) -> Result<usize, ParseError> {
        let b = self.b;
        let digits = |mut i: usize| {
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            i
        };
        let mut i = start;
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        match b.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => i = digits(i + 1),
            _ => return Err(err(i, "a number needs digits")),
        }
        if b.get(i) == Some(&b'.') {
            let end = digits(i + 1);
            if end == i + 1 {
                return Err(err(end, "a number needs digits after '.'"));
            }
            i = end;
        }
        if matches!(b.get(i), Some(b'e' | b'E')) {
            i += 1;
            if matches!(b.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            let end = digits(i);
            if end == i {
                return Err(err(i, "a number needs digits in its exponent"));
            }
            i = end;
        }
        if !self.in_deep() {
            let n = self.push_node(Kind::Number, start);
            self.nodes[n as usize].src.1 = i as u32;
            self.completed();
        }
        Ok(i)
    }

    /// Reads a string from its opening quote at `start`; adds a node unless
    /// deep. Returns its end. Always inlined (the per-string call showed in
    /// profiles); the decoding of escapes stays out of line.
    #[inline(always)]
    fn string(&mut self, start: usize) -> Result<usize, ParseError> {
        let b = self.b;
        let body = start + 1;
        // Fast path: no escapes. Raw control bytes are invalid in JSON strings.
        let end = skip_plain(b, body);
        match b.get(end) {
            None => return Err(err(start, "unterminated string")),
            Some(b'"') => {
                if !self.in_deep() {
                    let i = self.push_node(Kind::String, start) as usize;
                    let n = &mut self.nodes[i];
                    n.src.1 = (end + 1) as u32;
                    n.a = body as u32;
                    n.b = (end - body) as u32;
                }
                return Ok(end + 1);
            }
            Some(b'\\') => {}
            Some(_) => return Err(err(end, "raw control character in a string")),
        }
        // Slow path: only checked when nothing is kept, else decoded into the arena.
        if self.in_deep() {
            return skip_escaped(b, end, start, COMPACT);
        }
        self.decode_string(start, end)
    }

    /// The rest of a string from `start`, its first backslash at `first`,
    /// decoded into the arena.
    #[inline(never)]
    fn decode_string(&mut self, start: usize, first: usize) -> Result<usize, ParseError> {
        let body = start + 1;
        self.pos = first;
        let arena_start = self.arena.len();
        let mut has_nul = false;
        self.arena.extend_from_slice(&self.b[body..self.pos]);
        loop {
            let at = self.pos;
            match self.b.get(at) {
                None => return Err(err(start, "unterminated string")),
                Some(b'"') => {
                    self.pos += 1;
                    break;
                }
                Some(b'\\') => {
                    let esc = *self.b.get(at + 1).ok_or_else(|| err(start, "unterminated string"))?;
                    self.pos += 2;
                    let byte = match esc {
                        b'"' => b'"',
                        b'\\' => b'\\',
                        b'/' => b'/',
                        b'b' => 0x08,
                        b'f' => 0x0c,
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'u' => {
                            let c = self.unicode_escape(at)?;
                            if c == '\0' {
                                has_nul = true;
                            }
                            let mut buf = [0u8; 4];
                            self.arena.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                            continue;
                        }
                        _ => return Err(err(at, "invalid escape in a string")),
                    };
                    self.arena.push(byte);
                }
                Some(&c) if c < 0x20 => return Err(err(at, "raw control character in a string")),
                Some(_) => {
                    // Copy the run up to the next quote, backslash or control byte.
                    let run_end = skip_plain(self.b, at);
                    self.arena.extend_from_slice(&self.b[at..run_end]);
                    self.pos = run_end;
                }
            }
        }
        let i = self.push_node(Kind::String, start) as usize;
        let n = &mut self.nodes[i];
        n.src.1 = self.pos as u32;
        n.flags = IN_ARENA | if has_nul { HAS_NUL } else { 0 };
        n.a = arena_start as u32;
        n.b = (self.arena.len() - arena_start) as u32;
        Ok(self.pos)
    }

    /// After `\u` (self.pos is past the `u`): one character, a surrogate pair
    /// combined, a lone surrogate as U+FFFD.
    fn unicode_escape(&mut self, at: usize) -> Result<char, ParseError> {
        let hi = hex4_at(self.b, self.pos).ok_or_else(|| err(at, "invalid \\u escape in a string"))?;
        self.pos += 4;
        if (0xD800..0xDC00).contains(&hi) {
            if self.b.get(self.pos..self.pos + 2) == Some(b"\\u") {
                if let Some(lo) = hex4_at(self.b, self.pos + 2) {
                    if (0xDC00..0xE000).contains(&lo) {
                        self.pos += 6;
                        let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                        return Ok(char::from_u32(c).unwrap_or('\u{FFFD}'));
                    }
                }
            }
            return Ok('\u{FFFD}');
        }
        Ok(char::from_u32(hi).unwrap_or('\u{FFFD}'))
    }
}

/// How an R bridge should read a JSON number (what jsonlite does): an integer
/// that fits R's integer type (R's NA bit pattern excluded) is an integer;
/// anything else is the nearest double, with overflow to infinity and
/// underflow to zero.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RNumber {
    Int(i32),
    Double(f64),
}

/// `text` is a JSON number (the reader's syntax).
pub fn r_number(text: &str) -> RNumber {
    // Integers of at most ten digits are summed here, in one pass (a large
    // array argument has millions of them).
    let (negative, digits) = match text.as_bytes().split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text.as_bytes()),
    };
    if (1..=10).contains(&digits.len()) && digits.iter().all(u8::is_ascii_digit) {
        let magnitude = digits.iter().fold(0i64, |n, &c| n * 10 + i64::from(c - b'0'));
        let i = if negative { -magnitude } else { magnitude };
        if i > i32::MIN as i64 && i <= i32::MAX as i64 {
            return RNumber::Int(i as i32);
        }
    }
    if let Some(d) = short_decimal(negative, digits) {
        return RNumber::Double(d);
    }
    // Rust's parser rounds correctly and saturates to +-inf / 0.
    RNumber::Double(text.parse::<f64>().unwrap_or(f64::NAN))
}

/// Powers of ten a double holds exactly.
const EXACT_POWERS: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
    1e21, 1e22,
];

/// A plain decimal (`digits.digits`, no exponent) of at most 15 significant
/// digits and 22 decimal places, without a general parser: its digits form
/// an integer a double holds exactly, and so does the power of ten, so one
/// division rounds correctly (the case Rust's parser also takes first).
#[inline]
fn short_decimal(negative: bool, digits: &[u8]) -> Option<f64> {
    if digits.len() > 16 {
        return None;
    }
    let mut mantissa = 0u64;
    let mut places = None;
    for (i, &c) in digits.iter().enumerate() {
        match c {
            b'0'..=b'9' => mantissa = mantissa * 10 + u64::from(c - b'0'),
            b'.' if places.is_none() => places = Some(digits.len() - i - 1),
            _ => return None,
        }
    }
    let places = places?;
    if mantissa >= 1 << 53 || places >= EXACT_POWERS.len() {
        return None;
    }
    let d = mantissa as f64 / EXACT_POWERS[places];
    Some(if negative { -d } else { d })
}

/// A number's value in canonical form, for exact comparison of request ids:
/// `1`, `1.0`, `1e0` and `10e-1` are equal; big integers are compared digit by
/// digit, never through a float.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ExactNumber {
    negative: bool,
    /// Significant digits without leading or trailing zeros ("" for zero).
    digits: String,
    /// The value is `0.digits * 10^exp`.
    exp: i64,
}

impl ExactNumber {
    /// Parse JSON number text (already validated by the reader).
    pub fn parse(text: &str) -> Option<ExactNumber> {
        let (negative, rest) = match text.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, text),
        };
        let (mantissa, exp_part) = match rest.find(['e', 'E']) {
            Some(p) => (&rest[..p], Some(&rest[p + 1..])),
            None => (rest, None),
        };
        let (int_part, frac_part) = match mantissa.find('.') {
            Some(p) => (&mantissa[..p], &mantissa[p + 1..]),
            None => (mantissa, ""),
        };
        if int_part.is_empty() || !int_part.bytes().chain(frac_part.bytes()).all(|c| c.is_ascii_digit()) {
            return None;
        }
        let mut exp: i64 = match exp_part {
            None => 0,
            Some(e) => {
                let (neg, d) = match e.as_bytes().first() {
                    Some(b'-') => (true, &e[1..]),
                    Some(b'+') => (false, &e[1..]),
                    _ => (false, e),
                };
                if d.is_empty() || !d.bytes().all(|c| c.is_ascii_digit()) {
                    return None;
                }
                // Saturate: exponents beyond this are equally absurd.
                let v = d.bytes().fold(0i64, |acc, c| acc.saturating_mul(10).saturating_add((c - b'0') as i64));
                if neg {
                    -v
                } else {
                    v
                }
            }
        };
        let all: String = int_part.chars().chain(frac_part.chars()).collect();
        exp = exp.saturating_add(int_part.len() as i64);
        let lead = all.len() - all.trim_start_matches('0').len();
        let digits = all[lead..].trim_end_matches('0').to_string();
        exp = exp.saturating_sub(lead as i64);
        if digits.is_empty() {
            return Some(ExactNumber { negative: false, digits, exp: 0 });
        }
        Some(ExactNumber { negative, digits, exp })
    }

    /// Whether the value is a whole number.
    pub fn is_integral(&self) -> bool {
        self.digits.is_empty() || self.exp >= self.digits.len() as i64
    }

    /// Whether a double can come near it (no more than 309 digits before the
    /// point): beyond, every JSON reader a client uses sees infinity.
    pub fn is_finite_double(&self) -> bool {
        self.exp <= 309
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Doc {
        Doc::parse(s.as_bytes().to_vec()).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn perr(s: &str) -> ParseError {
        match Doc::parse(s.as_bytes().to_vec()) {
            Ok(_) => panic!("{s} parsed"),
            Err(e) => e,
        }
    }

    #[test]
    fn reads_every_kind_and_keeps_structure() {
        let d = p(r#" {"a":[1,-2.5e3,true,false,null,"x"],"b":{},"c":[],"d":{"e":"f\"g"}} "#);
        let r = d.root();
        assert!(r.is_object());
        assert_eq!(r.len(), 4);
        let a = r.get("a").unwrap();
        let items: Vec<String> = a.items().map(|v| v.raw_str().to_string()).collect();
        assert_eq!(items, ["1", "-2.5e3", "true", "false", "null", "\"x\""]);
        assert_eq!(a.len(), 6);
        assert_eq!(r.get("b").unwrap().kind(), Kind::Object);
        assert!(r.get("b").unwrap().is_empty());
        assert_eq!(r.get("c").unwrap().len(), 0);
        assert_eq!(r.get("d").unwrap().get("e").unwrap().as_str(), Some("f\"g"));
        assert_eq!(r.get("d").unwrap().raw_str(), r#"{"e":"f\"g"}"#);
        assert!(r.get("zz").is_none());
        let keys: Vec<&str> = r.members().map(|(k, _)| k.as_str().unwrap()).collect();
        assert_eq!(keys, ["a", "b", "c", "d"]);
    }

    #[test]
    fn duplicate_keys_are_kept_and_get_answers_the_last() {
        let d = p(r#"{"x":1,"x":2}"#);
        assert_eq!(d.root().members().count(), 2);
        assert_eq!(d.root().get("x").unwrap().raw_str(), "2");
    }

    #[test]
    fn escapes_surrogates_and_nul() {
        let d = p(r#"["a\u0000b","\ud800","\udc00x","\ud800\ud800","\ud83d\ude00","\u00e9\n\/","plain é"]"#);
        let v: Vec<Val> = d.root().items().collect();
        assert_eq!(v[0].as_str(), Some("a\0b"));
        assert!(v[0].has_nul());
        assert_eq!(v[1].as_str(), Some("\u{FFFD}"));
        assert_eq!(v[2].as_str(), Some("\u{FFFD}x"));
        assert_eq!(v[3].as_str(), Some("\u{FFFD}\u{FFFD}"));
        assert_eq!(v[4].as_str(), Some("\u{1F600}"));
        assert_eq!(v[5].as_str(), Some("é\n/"));
        assert_eq!(v[6].as_str(), Some("plain é"));
        assert!(!v[6].has_nul());
    }

    #[test]
    fn syntax_errors_say_where() {
        for bad in [
            "",
            " ",
            "{",
            "[1,]",
            "[1 2]",
            "{\"a\" 1}",
            "{\"a\":}",
            "{a:1}",
            "[01]",
            "[1.]",
            "[.5]",
            "[1e]",
            "[-]",
            "\"abc",
            "\"a\tb\"",
            "\"\\x\"",
            "\"\\u12\"",
            "tru",
            "nul",
            "[1]x",
            "{} {}",
            "{\"a\":1,}",
            "[}",
            "{]",
        ] {
            assert!(matches!(perr(bad), ParseError::Syntax { .. }), "{bad:?}");
        }
        assert_eq!(perr("[1,]").to_string(), "expected a JSON value at byte 3");
        assert!(matches!(Doc::parse(vec![b'"', 0xff, b'"']), Err(ParseError::NotUtf8 { at: 1 })));
    }

    #[test]
    fn deep_nesting_is_marked_not_recursed() {
        let depth = 200_000;
        let line = format!("{{\"id\":1,\"x\":{}{}}}", "[".repeat(depth), "]".repeat(depth));
        let d = p(&line);
        let x = d.root().get("x").unwrap();
        assert!(x.contains_deep());
        assert!(x.nests_deeper_than(512));
        let d2 = p(&format!("{{\"a\":[{{}},{}1{}]}}", "[".repeat(9), "]".repeat(9)));
        let a = d2.root().get("a").unwrap();
        assert!(!a.nests_deeper_than(10) && a.nests_deeper_than(9));
        assert!(!d2.root().nests_deeper_than(11) && d2.root().nests_deeper_than(10));
        assert_eq!(d.root().get("id").unwrap().raw_str(), "1");
        // Exactly at the limit: kept; one more: a Deep marker.
        let kept = format!("{}{}", "[".repeat(MAX_TREE_DEPTH), "]".repeat(MAX_TREE_DEPTH));
        assert!(!p(&kept).root().contains_deep());
        let over = format!("{}{}", "[".repeat(MAX_TREE_DEPTH + 1), "]".repeat(MAX_TREE_DEPTH + 1));
        assert!(p(&over).root().contains_deep());
        // Mismatched brackets deep down are still syntax errors.
        let bad = format!("{}{}", "[".repeat(5000), "}".repeat(5000));
        assert!(matches!(perr(&bad), ParseError::Syntax { .. }));
        let bad = format!("{}{{\"a\" 1}}{}", "[".repeat(3000), "]".repeat(3000));
        assert!(matches!(perr(&bad), ParseError::Syntax { .. }));
    }

    #[test]
    fn numbers_for_r() {
        assert_eq!(r_number("1"), RNumber::Int(1));
        assert_eq!(r_number("-0"), RNumber::Int(0));
        assert_eq!(r_number("2147483647"), RNumber::Int(i32::MAX));
        assert_eq!(r_number("-2147483647"), RNumber::Int(-i32::MAX));
        assert_eq!(r_number("-2147483648"), RNumber::Double(-2147483648.0));
        assert_eq!(r_number("2147483648"), RNumber::Double(2147483648.0));
        assert_eq!(r_number("1.0"), RNumber::Double(1.0));
        assert_eq!(r_number("1e2"), RNumber::Double(100.0));
        assert_eq!(r_number("1e400"), RNumber::Double(f64::INFINITY));
        // Short decimals (read without the general parser) round as it does.
        for text in [
            "0.1",
            "-0.0",
            "0.30000000000000004",
            "123456789012.345",
            "9007199254740.993",
            "-841.471",
            "1.7976931348623157",
            "0.0000000000000000000001",
            "4503599627370.4975",
            "12345678901234567.0",
        ] {
            let want = text.parse::<f64>().unwrap();
            let RNumber::Double(got) = r_number(text) else { panic!("{text}") };
            assert_eq!(got.to_bits(), want.to_bits(), "{text}");
        }
        assert_eq!(r_number("-1e400"), RNumber::Double(f64::NEG_INFINITY));
        assert_eq!(r_number("1e-400"), RNumber::Double(0.0));
        assert_eq!(r_number("123456789012345678901234567890"), RNumber::Double(1.2345678901234568e29));
    }

    #[test]
    fn exact_numbers_compare_by_value() {
        let n = |s: &str| ExactNumber::parse(s).unwrap();
        for same in [
            ["1", "1.0"],
            ["1", "1e0"],
            ["1", "10e-1"],
            ["100", "1e2"],
            ["0", "-0"],
            ["0", "0.000e9"],
            ["-5", "-0.5e1"],
        ] {
            assert_eq!(n(same[0]), n(same[1]), "{same:?}");
        }
        assert_ne!(n("18446744073709551617"), n("18446744073709551616"));
        assert_ne!(n("1"), n("-1"));
        assert!(n("1e400").is_integral());
        assert!(n("10e-1").is_integral());
        assert!(!n("1.5").is_integral());
        assert!(!n("1e-1").is_integral());
        assert!(n("0.0").is_integral());
    }
    fn compact(s: &[u8]) -> Result<(), ParseError> {
        check_compact(s, crate::rjson::MAX_DEPTH)
    }

    #[test]
    fn compact_json_is_accepted() {
        for s in [
            "0",
            "-0",
            "1.5e-05",
            "1E+20",
            "-12.25",
            "true",
            "false",
            "null",
            "\"\"",
            "\"a\\\"b\\\\c\\/\\b\\f\\n\\r\\t\"",
            "\"\\u00e9\\ud83d\\ude00\"",
            "\"d\u{e9}j\u{e0} \u{1F600}\"",
            "[]",
            "{}",
            "[1,[2,[]],{}]",
            r#"{"a":1,"b":[true,false,null],"c":{"d":"e"}}"#,
            r#"[{"id":1,"value":0.5},{}]"#,
            "\"\u{7f}\"",
        ] {
            assert_eq!(compact(s.as_bytes()), Ok(()), "{s}");
        }
    }

    #[test]
    fn what_compact_json_must_not_hold_is_refused_where_it_is() {
        let at = |s: &[u8]| match compact(s) {
            Err(ParseError::Syntax { at, .. }) | Err(ParseError::NotUtf8 { at }) => at,
            other => panic!("{:?}: {other:?}", String::from_utf8_lossy(s)),
        };
        for (text, offset) in [
            (&b""[..], 0),
            (b"{\"a\": 1}", 5),
            (b" 1", 0),
            (b"[1]\n", 3),
            (b"[1] ", 3),
            (b"[1][2]", 3),
            (b"{\"a\":1,}", 7),
            (b"[1,,2]", 3),
            (b"[1,2", 4),
            (b"\"a\nb\"", 2),
            (b"\"\\x\"", 1),
            (b"\"\\ud800\"", 1),
            (b"\"\\ud800\\u0041\"", 1),
            (b"\"\\udc00\"", 1),
            (b"[\"a\\udc00\"]", 3),
            (b"[\"a\xff\"]", 3),
            (b"01", 1),
            (b"1.", 2),
            (b"NaN", 0),
            (b"[1}", 2),
        ] {
            assert_eq!(at(text), offset, "{:?}", String::from_utf8_lossy(text));
        }
        assert!(compact(b"\"ab").is_err());
        // A client's message may hold a lone surrogate (read as U+FFFD).
        assert!(Doc::parse(b"\"\\ud800\"".to_vec()).is_ok());
    }

    #[test]
    fn compact_nesting_stops_at_the_serializer_limit() {
        let limit = crate::rjson::MAX_DEPTH;
        let ok = format!("{}{}", "[".repeat(limit), "]".repeat(limit));
        assert_eq!(compact(ok.as_bytes()), Ok(()));
        let deep = format!("{}{}", "[".repeat(limit + 1), "]".repeat(limit + 1));
        assert!(matches!(compact(deep.as_bytes()), Err(ParseError::Syntax { at, .. }) if at == limit));
        // Never recursion: a huge run of brackets is only an error.
        assert!(compact("[{\"a\":".repeat(1_000_000).as_bytes()).is_err());
    }

    #[test]
    fn strings_are_scanned_correctly_at_every_word_offset() {
        for len in 0..40 {
            for pos in 0..len {
                let mut body = vec![b'x'; len];
                body[pos] = b'"';
                let text = [&b"\""[..], &body, b"\""].concat();
                // An unescaped quote inside ends the string early.
                assert!(matches!(compact(&text), Err(ParseError::Syntax { at, .. }) if at == pos + 2), "{len} {pos}");
                let doc = Doc::parse(text.clone());
                assert!(doc.is_err(), "the reader agrees: {len} {pos}");
                body[pos] = b'\\';
                body.insert(pos + 1, b'n');
                let text = [&b"\""[..], &body, b"\""].concat();
                assert_eq!(compact(&text), Ok(()), "{len} escape at {pos}");
                let doc = Doc::parse(text).unwrap();
                assert_eq!(doc.root().as_str().unwrap().len(), len, "decoded: {len} {pos}");
                for ctrl in [0x01u8, 0x1f] {
                    let mut raw = vec![b'x'; len];
                    raw[pos] = ctrl;
                    let text = [&b"\""[..], &raw, b"\""].concat();
                    assert!(compact(&text).is_err() && Doc::parse(text).is_err(), "control byte {len} {pos}");
                }
            }
        }
    }
}
