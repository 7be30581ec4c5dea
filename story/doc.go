// Package story is the Task Story's pure logic (seed 004): the decision
// records agents hand back, their deduplication and superseding, the two
// budgeted compressions, the offline token approximation and the scoring
// of fact retention. It reads no files and keeps no state; package nodes
// writes the records into the execution directory and reads them back.
//
// # Records
//
// A Record is one session's Facts — decisions (what and why), commands
// (TODO / NOT TODO), methods (names and signatures created), dependencies,
// the user's requirements and recommendations — with who wrote it (role,
// phase, attempt, iteration) and its sequence number. Records are
// append-only: nodes writes each to story/NNN-<role>-p<phase>-a<attempt>.json
// (Name) and commits it with the phase, '<', '>' and '&' as written. A
// reviewer's record (RoleReviewer) holds what a review said.
//
// # Compression
//
// Level1 renders one phase's records (across attempts and review
// iterations) within Level1Budget tokens; Level2 renders the story so far
// at a phase boundary within Level2Budget tokens. Both are deterministic:
// they drop duplicates and superseded items (Merge: a decision of the
// same topic, a method of the same name or renamed in words, a
// requirement whose value a later one changes, with the sentences that
// restate it), keep methods, dependencies, user requirements and NOT
// TODOs verbatim, and shed the rest by need, not by kind (need.go): each
// sentence of a summary or review, each recommendation, TODO, reason and
// decision is scored — a constraint, a word a later phase's task (Need)
// shares with it and few other units do, a name, then kind and recency —
// and the lowest go first until the text fits. Neither level exceeds its
// budget: when the verbatim items alone do not fit, the oldest methods and
// then the oldest dependencies are left out (counted, with a pointer to
// the story/ files) and ErrOverBudget says so; requirements and NOT TODOs
// are never left out. The text is compact — one item a line under a
// heading per kind, no phase numbers but a summary's or review's — so its
// size follows the items still live, not the number of phases that
// produced them. Level2Without and Level1Without render the two levels
// for one prompt without saying an item twice or keeping one the phase's
// own records superseded. CheckSummary decides whether a summarizer's text
// may replace the deterministic one: it must fit the budget, keep every
// verbatim item, and contain no word absent from the sources, so a summary
// never holds a fact its sources lack.
//
// # Tokens
//
// Tokens approximates a model's token count offline as one token per four
// bytes of UTF-8, rounded up (OpenAI's published rule of thumb for English
// text and code; langchaingo's tiktoken counter downloads its encodings,
// which fails without a network). Reported usage from a provider is used
// instead wherever a provider gives it.
package story
