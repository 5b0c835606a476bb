//! Which token rules a string may match, in one pass: every match of a
//! rule's head starts with one of a few literals (`ghp_`, `://`,
//! `--api-key`), which regex-syntax's literal extraction reads off the head
//! itself, so this list never drifts from the rules. One Aho-Corasick
//! automaton of all of them finds which a string holds; only those rules'
//! regexes run, and a string holding none runs no regex at all.
//!
//! The set is a superset of what the heads match (a literal is only the
//! start of a head), so running the rules it names finds exactly what
//! running every rule would.
//!
//! Building the automaton costs several million instructions, most of a
//! small command's run (the shield scans the environment's values before
//! the first line it prints), so short texts are searched without it, by
//! the literals' first two bytes: both ways find every occurrence of every
//! literal, and the automaton is built once a run has searched enough text
//! for it to pay.
//!
//! Nothing is built at start-up: the literals' grouping by spelling and
//! the index of their first two bytes come as tables in
//! `rule_literals.rs`, written by a unit test from the rules (with the
//! builders kept here, for tests only, as their reference).

#[cfg(test)]
use std::ops::Range;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use aho_corasick::{AhoCorasick, AhoCorasickKind};
#[cfg(test)]
use regex_syntax::hir::literal::{ExtractKind, Extractor};

use super::formats::Spec;
#[cfg(test)]
use super::rule_literals::LITERAL_ORDER;
use super::rule_literals::{
    ALWAYS, ANY_CASE, FOLDED_LITERALS, PAIR_INDEX, RULE_LITERALS, SPELLING_RANGES, SPELLINGS,
};

/// How many rules a [`RuleSet`] holds at most.
const MAX_RULES: usize = 256;

/// A set of rule indices.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct RuleSet([u64; MAX_RULES / 64]);

impl RuleSet {
    fn insert(&mut self, index: usize) {
        self.0[index / 64] |= 1 << (index % 64);
    }

    fn union(&mut self, other: &Self) {
        for (word, more) in self.0.iter_mut().zip(other.0) {
            *word |= more;
        }
    }

    /// Whether it holds no rule.
    pub(super) fn is_empty(&self) -> bool {
        self.0.iter().all(|word| *word == 0)
    }

    /// Whether it holds rule `index`.
    pub(super) fn contains(&self, index: usize) -> bool {
        self.0[index / 64] & (1 << (index % 64)) != 0
    }

    /// The rule indices, ascending (the reference's order).
    pub(super) fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(at, &word)| {
            let mut rest = word;
            std::iter::from_fn(move || {
                (rest != 0).then(|| {
                    let bit = rest.trailing_zeros() as usize;
                    rest &= rest - 1;
                    at * 64 + bit
                })
            })
        })
    }
}

/// What the prefilter found in a text.
#[derive(Debug)]
pub(super) struct Candidates {
    /// Every rule the text may match.
    pub(super) rules: RuleSet,
    /// Those that may match anywhere, not only where one of their literals
    /// starts (no literal, or a `(?i)` rule in a text that is not ASCII).
    pub(super) anywhere: RuleSet,
    /// `(rule, where one of its literals starts)`.
    starts: Vec<(usize, usize)>,
}

impl Candidates {
    /// Where the literals of `rule` start in the text, in order: every
    /// match of a rule without a lead starts at one of them (unless it
    /// may match [anywhere](Self::anywhere)).
    pub(super) fn starts_of(&self, rule: usize) -> Vec<usize> {
        let mut starts: Vec<usize> = self
            .starts
            .iter()
            .filter(|(of, _)| *of == rule)
            .map(|(_, start)| *start)
            .collect();
        starts.sort_unstable();
        starts.dedup();
        starts
    }
}

/// A spelling of a literal rules start with, and the rules it names
/// (as [`grouped`] builds them; `rule_literals.rs` holds them as
/// [`Spelling`]s).
#[cfg(test)]
#[derive(Debug, PartialEq, Eq)]
struct Variant {
    /// The exact bytes a case-sensitive rule needs; `None` for a `(?i)`
    /// rule, which takes any case.
    exact: Option<&'static [u8]>,
    /// Whether the rule's pattern has a `\b` (ASCII) right before it.
    boundary: bool,
    rules: RuleSet,
}

/// What [`Prefilter::built`] makes of the rules' literals: the rules
/// without one, those that take any case, the spellings grouped by
/// literal, and the first-two-bytes index.
#[cfg(test)]
#[derive(Debug)]
struct Built {
    always: RuleSet,
    any_case: RuleSet,
    literals: Vec<Range<usize>>,
    variants: Vec<Variant>,
    pairs: Option<BuiltPairs>,
}

/// [`PairTables`] as [`pair_index`] builds them.
#[cfg(test)]
type BuiltPairs = ([u64; 4], Vec<(u16, u16, u16)>, Vec<u16>);

/// A spelling as `rule_literals.rs` holds it: the exact bytes (`None`:
/// any case), whether a `\b` must come before it, and its rules' bits.
pub(super) type Spelling = (Option<&'static [u8]>, bool, [u64; MAX_RULES / 64]);

/// The first-two-bytes index as `rule_literals.rs` holds it: which first
/// bytes a literal starts with, the distinct pairs with their range in the
/// order, and the pattern ids grouped by pair; `None` when a literal is
/// shorter than two bytes.
pub(super) type PairTables = Option<([u64; 4], &'static [(u16, u16, u16)], &'static [u16])>;

/// How many bytes a run searches through [`PairIndex`] before it builds
/// the automaton: about what the automaton's build costs, searched the
/// slower way.
const SEARCH_BEFORE_AUTOMATON: usize = 128 * 1024;

/// The literals of every rule's head, in one automaton.
#[derive(Debug)]
pub(super) struct Prefilter {
    /// Every literal, ASCII case folded, by pattern id.
    folded: &'static [&'static [u8]],
    /// Built when first worth it; `None` inside when it could not be built
    /// (then [`PairIndex`] finds the same).
    automaton: OnceLock<Option<AhoCorasick>>,
    /// The search without the automaton; `None` when a literal is shorter
    /// than two bytes (then the automaton is always used).
    pairs: Option<PairIndex>,
    /// Bytes searched so far without the automaton.
    searched: AtomicUsize,
    /// How many rules there are.
    rule_count: usize,
    /// By pattern id: where its spellings are in `spellings`.
    literals: &'static [(u16, u16)],
    /// The spellings of every literal (ASCII case kept, or not for a
    /// `(?i)` rule), each with the rules it names.
    spellings: &'static [Spelling],
    /// Rules with no literal to find: candidates for every string.
    always: RuleSet,
    /// The `(?i)` rules: Unicode case folding lets `K` (Kelvin) and `ſ`
    /// stand for `k` and `s`, which an ASCII-case-insensitive literal does
    /// not see, so in a string that is not ASCII they are all candidates.
    any_case: RuleSet,
}

impl Prefilter {
    /// The prefilter of `specs` (`(id, provider, lead, head, tail)`): the
    /// tables `rule_literals.rs` holds for them, nothing built (a unit test
    /// keeps the tables equal to what [`Self::built`] makes of the rules).
    pub(super) fn new(specs: &[Spec]) -> Self {
        assert!(specs.len() <= MAX_RULES, "a RuleSet holds every rule");
        assert_eq!(specs.len(), RULE_LITERALS.len(), "{STALE_TABLE}");
        Self {
            pairs: PAIR_INDEX.map(|(firsts, pairs, order)| PairIndex {
                firsts,
                pairs,
                order,
            }),
            folded: FOLDED_LITERALS,
            automaton: OnceLock::new(),
            searched: AtomicUsize::new(0),
            rule_count: specs.len(),
            literals: SPELLING_RANGES,
            spellings: SPELLINGS,
            always: RuleSet(ALWAYS),
            any_case: RuleSet(ANY_CASE),
        }
    }

    /// What [`Self::new`] built at every start before its tables were
    /// generated: which rules take any case and which have no literal, the
    /// literals' spellings grouped by literal, and the first-two-bytes
    /// index, from `table` (`RULE_LITERALS`), `order` (`LITERAL_ORDER`)
    /// and `folded` (`FOLDED_LITERALS`).
    #[cfg(test)]
    fn built(
        specs: &[Spec],
        table: &[(&str, &'static [&'static [u8]], bool)],
        order: &[(u16, u16)],
        folded: &[&[u8]],
    ) -> Built {
        let mut always = RuleSet::default();
        let mut any_case = RuleSet::default();
        let mut count = 0;
        for (index, &(id, _, lead, head, _)) in specs.iter().enumerate() {
            if lead.starts_with("(?i)") || head.starts_with("(?i)") {
                any_case.insert(index);
            }
            match table_literals(table, index, id) {
                Some((found, _)) => count += found.len(),
                None => always.insert(index),
            }
        }
        assert_eq!(count, order.len(), "{STALE_TABLE}");
        let (literals, variants) = grouped(
            order.iter().map(|&(rule, at)| {
                let index = usize::from(rule);
                let (_, found, boundary) = table[index];
                (found[usize::from(at)], index, boundary)
            }),
            &any_case,
            folded,
        );
        Built {
            always,
            any_case,
            literals,
            variants,
            pairs: pair_index(folded),
        }
    }

    /// The automaton, built on first use.
    fn automaton(&self) -> Option<&AhoCorasick> {
        self.automaton
            .get_or_init(|| {
                // A few hundred short literals, searched overlapping as
                // each one found names rules. The contiguous NFA builds in
                // a fraction of the DFA's time and searches nearly as fast.
                AhoCorasick::builder()
                    .ascii_case_insensitive(true)
                    .kind(Some(AhoCorasickKind::ContiguousNFA))
                    .build(self.folded)
                    .ok()
            })
            .as_ref()
    }

    /// Every `(pattern, start, end)` of a literal in `bytes`, in some
    /// order: through the automaton once a run has searched enough text,
    /// or when `pairs` cannot.
    fn hits(&self, bytes: &[u8], by_automaton: bool) -> Vec<(usize, usize, usize)> {
        if by_automaton && let Some(automaton) = self.automaton() {
            return automaton
                .find_overlapping_iter(bytes)
                .map(|hit| (hit.pattern().as_usize(), hit.start(), hit.end()))
                .collect();
        }
        match &self.pairs {
            Some(pairs) => pairs.hits(bytes, self.folded),
            // Invariant: plain literals always build; were it not so, no
            // literal could be found, and every rule runs instead (see
            // `candidates`).
            None => Vec::new(),
        }
    }

    /// Whether this text goes through the automaton.
    fn by_automaton(&self, length: usize) -> bool {
        self.pairs.is_none()
            || self.automaton.get().is_some()
            || self.searched.fetch_add(length, Ordering::Relaxed) + length > SEARCH_BEFORE_AUTOMATON
    }

    /// The rules `text` may match, and where.
    pub(super) fn candidates(&self, text: &str) -> Candidates {
        let mut found = Candidates {
            rules: self.always,
            anywhere: self.always,
            starts: Vec::new(),
        };
        if !text.is_ascii() {
            found.rules.union(&self.any_case);
            found.anywhere.union(&self.any_case);
        }
        let bytes = text.as_bytes();
        let by_automaton = self.by_automaton(bytes.len());
        if by_automaton && self.automaton().is_none() && self.pairs.is_none() {
            // Nothing can find the literals: every rule runs, which finds
            // the same.
            for index in 0..self.rule_count {
                found.rules.insert(index);
                found.anywhere.insert(index);
            }
            return found;
        }
        for (pattern, start, end) in self.hits(bytes, by_automaton) {
            let (from, to) = self.literals[pattern];
            // An ASCII `\b`: a word byte on one side only.
            let at_boundary = || {
                let before = start.checked_sub(1).map(|at| bytes[at]);
                before.is_some_and(is_word_byte) != is_word_byte(bytes[start])
            };
            for &(exact, boundary, rules) in &self.spellings[usize::from(from)..usize::from(to)] {
                if exact.is_none_or(|exact| bytes[start..end] == exact[..])
                    && (!boundary || at_boundary())
                {
                    let rules = RuleSet(rules);
                    found.rules.union(&rules);
                    found.starts.extend(rules.iter().map(|rule| (rule, start)));
                }
            }
        }
        found
    }

    /// The rules no literal stands for (tested to be none).
    #[cfg(test)]
    fn always(&self) -> RuleSet {
        self.always
    }
}

/// The spellings of `entries` (`(literal, rule, \b before it)`, equal
/// folded literals next to each other, in the order of `folded`), grouped
/// by literal: where each literal's spellings are in the second vector,
/// each spelling with the rules it names. A rule in `any_case` takes any
/// case.
#[cfg(test)]
fn grouped(
    entries: impl Iterator<Item = (&'static [u8], usize, bool)>,
    any_case: &RuleSet,
    folded: &[&[u8]],
) -> (Vec<Range<usize>>, Vec<Variant>) {
    let mut literals: Vec<Range<usize>> = Vec::with_capacity(folded.len());
    let mut variants: Vec<Variant> = Vec::new();
    for (literal, index, boundary) in entries {
        let exact = (!any_case.contains(index)).then_some(literal);
        let same = literals
            .len()
            .checked_sub(1)
            .is_some_and(|last| folded[last].eq_ignore_ascii_case(literal));
        if !same {
            assert!(
                folded
                    .get(literals.len())
                    .is_some_and(|next| next.eq_ignore_ascii_case(literal)),
                "{STALE_TABLE}"
            );
            literals.push(variants.len()..variants.len());
        }
        let spellings = literals.last_mut().expect("pushed above");
        if add_spelling(&mut variants, spellings.start, exact, boundary, index) {
            spellings.end += 1;
        }
    }
    assert_eq!(literals.len(), folded.len(), "{STALE_TABLE}");
    (literals, variants)
}

/// Adds rule `index` to the spelling `(exact, boundary)` among
/// `variants[from..]`, or that spelling at the end; whether it is new.
#[cfg(test)]
fn add_spelling(
    variants: &mut Vec<Variant>,
    from: usize,
    exact: Option<&'static [u8]>,
    boundary: bool,
    index: usize,
) -> bool {
    if let Some(variant) = variants[from..]
        .iter_mut()
        .find(|variant| variant.exact == exact && variant.boundary == boundary)
    {
        variant.rules.insert(index);
        return false;
    }
    let mut rules = RuleSet::default();
    rules.insert(index);
    variants.push(Variant {
        exact,
        boundary,
        rules,
    });
    true
}

/// The literals by their first two bytes (ASCII case folded): a short
/// text is searched by looking up each position's pair, which needs no
/// automaton. Hand-written because aho-corasick's cheapest builder still
/// compiles a trie with failure transitions, which is the cost avoided
/// here; its tables come from `rule_literals.rs` ([`pair_index`] makes
/// them).
#[derive(Debug)]
struct PairIndex {
    /// Which first bytes any literal starts with (256 bits).
    firsts: [u64; 4],
    /// Distinct pairs, sorted, each with its range in `order`.
    pairs: &'static [(u16, u16, u16)],
    /// Pattern ids, grouped by pair.
    order: &'static [u16],
}

/// The first-two-bytes index of `folded` (lower-case literals) as
/// [`PairIndex`] holds it: `None` when a literal is shorter than two
/// bytes, or there are too many for 16 bits.
#[cfg(test)]
fn pair_index(folded: &[&[u8]]) -> Option<BuiltPairs> {
    let mut keyed: Vec<(u16, u16)> = Vec::with_capacity(folded.len());
    let mut firsts = [0u64; 4];
    for (pattern, literal) in folded.iter().enumerate() {
        let [first, second, ..] = literal[..] else {
            return None;
        };
        firsts[usize::from(first) / 64] |= 1 << (first % 64);
        keyed.push((
            u16::from_be_bytes([first, second]),
            u16::try_from(pattern).ok()?,
        ));
    }
    keyed.sort_unstable();
    let mut pairs: Vec<(u16, u16, u16)> = Vec::new();
    for (at, (pair, _)) in keyed.iter().enumerate() {
        let at = u16::try_from(at).ok()?;
        match pairs.last_mut() {
            Some((last, _, end)) if last == pair => *end = at + 1,
            _ => pairs.push((*pair, at, at + 1)),
        }
    }
    Some((
        firsts,
        pairs,
        keyed.into_iter().map(|(_, pattern)| pattern).collect(),
    ))
}

impl PairIndex {
    /// Every `(pattern, start, end)` of a literal of `folded` in `bytes`,
    /// ASCII case ignored.
    fn hits(&self, bytes: &[u8], folded: &[&[u8]]) -> Vec<(usize, usize, usize)> {
        let mut hits = Vec::new();
        for start in 0..bytes.len().saturating_sub(1) {
            let first = bytes[start].to_ascii_lowercase();
            if self.firsts[usize::from(first) / 64] & (1 << (first % 64)) == 0 {
                continue;
            }
            let pair = u16::from_be_bytes([first, bytes[start + 1].to_ascii_lowercase()]);
            let Ok(found) = self.pairs.binary_search_by_key(&pair, |(key, _, _)| *key) else {
                continue;
            };
            let (_, from, to) = self.pairs[found];
            for &pattern in &self.order[usize::from(from)..usize::from(to)] {
                let pattern = usize::from(pattern);
                let literal = folded[pattern];
                let end = start + literal.len();
                if bytes
                    .get(start..end)
                    .is_some_and(|here| here.eq_ignore_ascii_case(literal))
                {
                    hits.push((pattern, start, end));
                }
            }
        }
        hits
    }
}

fn is_word_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// What `src/secrets/rule_literals.rs` holds for rule `index`: its
/// literals and whether a `\b` comes before them, `None` for none.
/// Reading them off the patterns (`rule_literals`) parses every rule, a
/// few milliseconds that every masked output would pay at start-up, so a
/// unit test does it and keeps the table equal to it.
#[cfg(test)]
fn table_literals(
    table: &[(&str, &'static [&'static [u8]], bool)],
    index: usize,
    id: &str,
) -> Option<(&'static [&'static [u8]], bool)> {
    let (table_id, literals, boundary) = table[index];
    assert_eq!(table_id, id, "{STALE_TABLE}");
    (!literals.is_empty()).then_some((literals, boundary))
}

const STALE_TABLE: &str = "src/secrets/rule_literals.rs is out of date: \
     run `MCPENV_UPDATE_LITERALS=1 cargo test --lib rule_literals`";

/// The literals every match of a rule starts with, and whether a `\b`
/// comes right before them: those of `lead` and `head` together when that
/// gives longer ones (`1/` of Asana's `\b[12]/[0-9]{13,19}` rather than the
/// `:` of its head, which every URL holds), else those of `head`, which
/// every match holds too (a match of the whole is one of the head, after
/// the lead). `None` when neither has any.
#[cfg(test)]
fn rule_literals(lead: &str, head: &str) -> Option<(Vec<Vec<u8>>, bool)> {
    let of_head = pattern_literals(head);
    let lead = lead.strip_prefix("(?i)").unwrap_or(lead);
    let of_whole = if lead.is_empty() {
        None
    } else {
        let head = head.strip_prefix("(?i)").unwrap_or(head);
        pattern_literals(&format!("{lead}{head}"))
    };
    let shortest = |literals: &Option<(Vec<Vec<u8>>, bool)>| {
        literals
            .as_ref()
            .and_then(|(literals, _)| literals.iter().map(Vec::len).min())
            .unwrap_or(0)
    };
    if shortest(&of_whole) > shortest(&of_head) {
        of_whole
    } else {
        of_head
    }
}

/// The literals every match of `pattern` starts with (a leading `(?i)`
/// dropped: the caller folds case), and whether it starts with `\b`;
/// `None` when there is no such finite set, or when it holds the empty
/// string.
#[cfg(test)]
fn pattern_literals(pattern: &str) -> Option<(Vec<Vec<u8>>, bool)> {
    let sensitive = pattern.strip_prefix("(?i)").unwrap_or(pattern);
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(sensitive)
        .ok()?;
    let sequence = Extractor::new().kind(ExtractKind::Prefix).extract(&hir);
    let literals: Vec<Vec<u8>> = sequence
        .literals()?
        .iter()
        .map(|literal| literal.as_bytes().to_vec())
        .collect();
    (!literals.is_empty() && literals.iter().all(|literal| !literal.is_empty()))
        .then_some((literals, sensitive.starts_with(r"\b")))
}

#[cfg(test)]
mod tests {
    use super::super::formats::RULE_SPECS;
    use super::*;

    #[test]
    fn every_head_has_literals() {
        let prefilter = Prefilter::new(RULE_SPECS);
        let always: Vec<&str> = prefilter
            .always()
            .iter()
            .map(|index| RULE_SPECS[index].0)
            .collect();
        assert!(always.is_empty(), "rules without a literal: {always:?}");
        for (id, _, lead, head, _) in RULE_SPECS {
            let (literals, _) = rule_literals(lead, head).unwrap();
            assert!(literals.len() <= 256, "{id}: {} literals", literals.len());
        }
    }

    /// The table the prefilter reads, as the rules' patterns give it.
    fn rule_literals_table() -> String {
        let mut text = String::from(
            "//! Generated from `formats.rs` by the unit test\n\
             //! `secrets::prefilter::tests::rule_literals_table_is_current`\n\
             //! (`MCPENV_UPDATE_LITERALS=1 cargo test --lib rule_literals`):\n\
             //! each rule's id, the literals every match of it starts with\n\
             //! (none: it may match anywhere), and whether a `\\b` comes before\n\
             //! them; then what the prefilter reads of them.\n\n\
             use super::prefilter::{PairTables, Spelling};\n\n\
             pub(super) const RULE_LITERALS: &[(&str, &[&[u8]], bool)] = &[\n",
        );
        for (id, _, lead, head, _) in RULE_SPECS {
            let (literals, boundary) = rule_literals(lead, head).unwrap_or_default();
            let literals: Vec<String> = literals
                .iter()
                .map(|literal| byte_string(literal))
                .collect();
            text.push_str(&format!(
                "    ({id:?}, &[{}], {boundary}),\n",
                literals.join(", ")
            ));
        }
        text.push_str("];\n");
        // (rule, literal of the rule) sorted by the folded literal, ties in
        // rule order: the stable sort `Prefilter::new` would otherwise do.
        let mut order: Vec<(Vec<u8>, usize, usize)> = Vec::new();
        for (index, (_, _, lead, head, _)) in RULE_SPECS.iter().enumerate() {
            let (literals, _) = rule_literals(lead, head).unwrap_or_default();
            for (at, literal) in literals.iter().enumerate() {
                order.push((literal.to_ascii_lowercase(), index, at));
            }
        }
        order.sort_by(|a, b| a.0.cmp(&b.0));
        text.push_str(
            "\n/// Every literal of `RULE_LITERALS` as (rule, its place in the rule's\n\
             /// list), sorted by its ASCII-lowercased bytes, ties in rule order: the\n\
             /// groupings below were made from it.\n\
             #[cfg(test)]\n\
             #[rustfmt::skip]\n\
             pub(super) const LITERAL_ORDER: &[(u16, u16)] = &[\n",
        );
        for line in order.chunks(8) {
            let pairs: Vec<String> = line
                .iter()
                .map(|(_, index, at)| format!("({index}, {at})"))
                .collect();
            text.push_str(&format!("    {},\n", pairs.join(", ")));
        }
        text.push_str(
            "];\n\n\
             /// The distinct literals of `LITERAL_ORDER`, ASCII-lowercased, in its\n\
             /// order: the patterns of the prefilter's automaton.\n\
             #[rustfmt::skip]\n\
             pub(super) const FOLDED_LITERALS: &[&[u8]] = &[\n",
        );
        let mut distinct: Vec<&[u8]> = order.iter().map(|(folded, _, _)| &folded[..]).collect();
        distinct.dedup();
        for literal in &distinct {
            text.push_str(&format!("    {},\n", byte_string(literal)));
        }
        text.push_str("];\n");
        // What `Prefilter::new` built from those at every start.
        let table: Vec<(&str, &'static [&'static [u8]], bool)> = RULE_SPECS
            .iter()
            .map(|(id, _, lead, head, _)| {
                let (literals, boundary) = rule_literals(lead, head).unwrap_or_default();
                let literals: Vec<&'static [u8]> = literals
                    .into_iter()
                    .map(|literal| &*Box::leak(literal.into_boxed_slice()))
                    .collect();
                (*id, &*Box::leak(literals.into_boxed_slice()), boundary)
            })
            .collect();
        let places: Vec<(u16, u16)> = order
            .iter()
            .map(|(_, index, at)| (u16::try_from(*index).unwrap(), u16::try_from(*at).unwrap()))
            .collect();
        let built = Prefilter::built(RULE_SPECS, &table, &places, &distinct);
        text.push_str(&format!(
            "\n/// The rules that take any case (`(?i)`), as bits.\n\
             pub(super) const ANY_CASE: [u64; 4] = {};\n\n\
             /// The rules without a literal, as bits: candidates for every string.\n\
             pub(super) const ALWAYS: [u64; 4] = {};\n",
            words(&built.any_case.0),
            words(&built.always.0),
        ));
        text.push_str(
            "\n/// By literal of `FOLDED_LITERALS`: where its spellings are in `SPELLINGS`.\n\
             #[rustfmt::skip]\n\
             pub(super) const SPELLING_RANGES: &[(u16, u16)] = &[\n",
        );
        for line in built.literals.chunks(8) {
            let ranges: Vec<String> = line
                .iter()
                .map(|range| format!("({}, {})", range.start, range.end))
                .collect();
            text.push_str(&format!("    {},\n", ranges.join(", ")));
        }
        text.push_str(
            "];\n\n\
             /// The spellings of every literal, grouped by literal: the exact\n\
             /// bytes a case-sensitive rule needs (`None`: any case), whether a `\\b`\n\
             /// comes before it, and the rules it names, as bits.\n\
             #[rustfmt::skip]\n\
             pub(super) const SPELLINGS: &[Spelling] = &[\n",
        );
        for variant in &built.variants {
            let exact = variant.exact.map_or("None".to_string(), |exact| {
                format!("Some({})", byte_string(exact))
            });
            text.push_str(&format!(
                "    ({exact}, {}, {}),\n",
                variant.boundary,
                words(&variant.rules.0)
            ));
        }
        text.push_str(
            "];\n\n\
             /// `FOLDED_LITERALS` by their first two bytes: which first bytes\n\
             /// there are, as bits; each distinct pair with its range in the\n\
             /// list after it; the literals, grouped by pair.\n\
             #[rustfmt::skip]\n\
             pub(super) const PAIR_INDEX: PairTables = ",
        );
        match &built.pairs {
            None => text.push_str("None;\n"),
            Some((firsts, pairs, order)) => {
                text.push_str(&format!("Some((\n    {},\n    &[\n", words(firsts)));
                for line in pairs.chunks(8) {
                    let pairs: Vec<String> = line
                        .iter()
                        .map(|(pair, from, to)| format!("({pair:#06x}, {from}, {to})"))
                        .collect();
                    text.push_str(&format!("        {},\n", pairs.join(", ")));
                }
                text.push_str("    ],\n    &[\n");
                for line in order.chunks(16) {
                    let ids: Vec<String> = line.iter().map(u16::to_string).collect();
                    text.push_str(&format!("        {},\n", ids.join(", ")));
                }
                text.push_str("    ],\n));\n");
            }
        }
        text
    }

    /// Bits as a Rust array of hexadecimal words.
    fn words(bits: &[u64; 4]) -> String {
        let words: Vec<String> = bits.iter().map(|word| format!("{word:#018x}")).collect();
        format!("[{}]", words.join(", "))
    }

    /// `literal` as a Rust byte string.
    fn byte_string(literal: &[u8]) -> String {
        let escaped: String = literal
            .iter()
            .flat_map(|byte| std::ascii::escape_default(*byte))
            .map(char::from)
            .collect();
        format!("b\"{escaped}\"")
    }

    /// What `Prefilter::built` makes of the file's literal tables.
    fn built_from_the_table() -> Built {
        Prefilter::built(RULE_SPECS, RULE_LITERALS, LITERAL_ORDER, FOLDED_LITERALS)
    }

    /// The prefilter's literals grouped as sorting them at start-up
    /// grouped them (what `Prefilter::new` did before `LITERAL_ORDER`):
    /// the same literals, in the same order, with the same spellings,
    /// boundaries and rules.
    #[test]
    fn the_sorted_table_groups_as_sorting_does() {
        let built = built_from_the_table();
        let insensitive = |index: usize| {
            let (_, _, lead, head, _) = RULE_SPECS[index];
            lead.starts_with("(?i)") || head.starts_with("(?i)")
        };
        // (folded literal, rule, exact spelling, `\b` before it)
        type Entry = (Vec<u8>, usize, Option<&'static [u8]>, bool);
        let mut entries: Vec<Entry> = Vec::new();
        for (index, (id, _, _, _, _)) in RULE_SPECS.iter().enumerate() {
            if let Some((found, boundary)) = table_literals(RULE_LITERALS, index, id) {
                for &literal in found {
                    let exact = (!insensitive(index)).then_some(literal);
                    entries.push((literal.to_ascii_lowercase(), index, exact, boundary));
                }
            }
        }
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let mut sorted: Vec<(Vec<u8>, Vec<Variant>)> = Vec::new();
        for (key, index, exact, boundary) in entries {
            if sorted.last().is_none_or(|(last, _)| *last != key) {
                sorted.push((key, Vec::new()));
            }
            let variants = &mut sorted.last_mut().expect("pushed above").1;
            add_spelling(variants, 0, exact, boundary, index);
        }
        let grouped: Vec<(Vec<u8>, &[Variant])> = FOLDED_LITERALS
            .iter()
            .zip(&built.literals)
            .map(|(folded, spellings)| (folded.to_vec(), &built.variants[spellings.clone()]))
            .collect();
        assert_eq!(grouped.len(), sorted.len());
        for ((folded, variants), (key, wanted)) in grouped.iter().zip(&sorted) {
            assert_eq!(folded, key);
            assert_eq!(*variants, &wanted[..]);
        }
        assert!(FOLDED_LITERALS.windows(2).all(|pair| pair[0] < pair[1]));
        let any_case: Vec<usize> = (0..RULE_SPECS.len())
            .filter(|&index| insensitive(index))
            .collect();
        assert_eq!(built.any_case.iter().collect::<Vec<_>>(), any_case);
    }

    /// The tables `Prefilter::new` reads are what building them from the
    /// literal table gives (`rule_literals_table_is_current` keeps the
    /// file equal to what the rules give; this pins what `new` makes of it).
    #[test]
    fn the_prefilter_reads_what_building_gives() {
        let prefilter = Prefilter::new(RULE_SPECS);
        let built = built_from_the_table();
        assert_eq!(prefilter.always, built.always);
        assert_eq!(prefilter.any_case, built.any_case);
        let ranges: Vec<Range<usize>> = prefilter
            .literals
            .iter()
            .map(|&(from, to)| usize::from(from)..usize::from(to))
            .collect();
        assert_eq!(ranges, built.literals);
        let spellings: Vec<Variant> = prefilter
            .spellings
            .iter()
            .map(|&(exact, boundary, rules)| Variant {
                exact,
                boundary,
                rules: RuleSet(rules),
            })
            .collect();
        assert_eq!(spellings, built.variants);
        let pairs = prefilter
            .pairs
            .as_ref()
            .map(|index| (index.firsts, index.pairs.to_vec(), index.order.to_vec()));
        assert_eq!(pairs, built.pairs);
        assert!(pairs.is_some(), "every literal has two bytes");
    }

    #[test]
    fn rule_literals_table_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/secrets/rule_literals.rs");
        let wanted = rule_literals_table();
        if std::env::var_os("MCPENV_UPDATE_LITERALS").is_some() {
            std::fs::write(path, &wanted).unwrap();
        }
        let table = std::fs::read_to_string(path).unwrap();
        assert!(table == wanted, "{STALE_TABLE}");
    }

    /// Every literal found both ways, on texts made of literals, their
    /// pieces in other cases, word bytes and other text.
    #[test]
    fn the_pair_index_finds_what_the_automaton_finds() {
        let prefilter = Prefilter::new(RULE_SPECS);
        let automaton = prefilter.automaton().expect("the literals build");
        let pairs = prefilter
            .pairs
            .as_ref()
            .expect("every literal has two bytes");
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..2_000 {
            let mut text = Vec::new();
            for _ in 0..(next() % 12) {
                let literal = prefilter.folded[(next() % prefilter.folded.len() as u64) as usize];
                match next() % 5 {
                    0 => text.extend(literal.iter().map(u8::to_ascii_uppercase)),
                    1 => text.extend(&literal[..literal.len() / 2 + 1]),
                    2 => text.extend(b"x_9"),
                    3 => text.extend("é ".as_bytes()),
                    _ => text.extend(literal),
                }
            }
            let mut by_automaton: Vec<(usize, usize, usize)> = automaton
                .find_overlapping_iter(&text)
                .map(|hit| (hit.pattern().as_usize(), hit.start(), hit.end()))
                .collect();
            let mut by_pairs = pairs.hits(&text, prefilter.folded);
            by_automaton.sort_unstable();
            by_pairs.sort_unstable();
            assert_eq!(
                by_pairs,
                by_automaton,
                "{:?}",
                String::from_utf8_lossy(&text)
            );
        }
    }

    #[test]
    fn a_short_text_needs_no_automaton() {
        let prefilter = Prefilter::new(RULE_SPECS);
        let found = prefilter.candidates("token ghp_abc");
        assert!(
            found
                .rules
                .iter()
                .any(|index| RULE_SPECS[index].0 == "github-pat")
        );
        assert!(prefilter.automaton.get().is_none());
        // Past the threshold the automaton is built, and finds the same.
        let long = "token ghp_abc ".repeat(SEARCH_BEFORE_AUTOMATON / 10);
        let by_automaton = prefilter.candidates(&long);
        assert!(prefilter.automaton.get().is_some());
        assert!(
            by_automaton
                .rules
                .iter()
                .any(|index| RULE_SPECS[index].0 == "github-pat")
        );
    }

    #[test]
    fn rules_are_named_by_their_literals() {
        let prefilter = Prefilter::new(RULE_SPECS);
        let named = |text: &str| -> Vec<&str> {
            prefilter
                .candidates(text)
                .rules
                .iter()
                .map(|index| RULE_SPECS[index].0)
                .collect()
        };
        assert!(named("nothing to see in this plain string").is_empty());
        assert!(named("token ghp_abc").contains(&"github-pat"));
        // `\bghp_`: not inside a word.
        assert!(!named("tokenghp_abc").contains(&"github-pat"));
        assert!(named("x 1/1234567890123:abc").contains(&"asana-token"));
        assert!(!named("https://example.com:8080").contains(&"asana-token"));
        // Case matters for a case-sensitive literal, not for a `(?i)` one.
        assert!(!named("token GHP_abc").contains(&"github-pat"));
        assert!(named("--API-KEY=x").contains(&super::super::CLI_FLAG_SECRET));
        // Kelvin sign: `(?i)` rules run on any string that is not ASCII.
        assert!(named("--API-\u{212a}EY=x").contains(&super::super::CLI_FLAG_SECRET));
        let mut set = RuleSet::default();
        for index in [0, 63, 64, 130, 255] {
            set.insert(index);
        }
        assert_eq!(set.iter().collect::<Vec<_>>(), [0, 63, 64, 130, 255]);
    }
}
