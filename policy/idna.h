// A-labels ("xn--" labels, RFC 5890 §2.3.2.1): the name predicate accepts one only when it is
// valid Punycode and decodes to a label IDNA2008 could produce. A label that some software
// decodes and some does not, or that decodes to a look-alike, a separator or a control, is a
// parser differential: the allowlist would list one thing and a client or CDN would mean another.
//
// What is checked, exactly (the full IDNA2008 tables are thousands of rows; these are the
// classes of code point that are DISALLOWED or CONTEXT-only by RFC 5892 and that change what a
// name means, plus the structural rules of RFC 5891 §5.4):
//   1. Punycode (RFC 3492 §6.2), with its overflow checks; at most kMaxLabelLength input
//      characters, so the output is at most 63 code points and the loop is bounded. Invalid
//      digits, a truncated delta, an overflow, a code point past U+10FFFF or a surrogate refuse.
//   2. The decoded label holds at least one non-ASCII code point (an all-ASCII "A-label" is not
//      one, RFC 5891 §5.4), does not start or end with '-', has no "--" in positions 3-4
//      (RFC 5891 §4.2.3.1), and does not start with a combining mark (U+0300-U+036F,
//      U+1AB0-U+1AFF, U+1DC0-U+1DFF, U+20D0-U+20FF, U+FE20-U+FE2F; RFC 5891 §4.2.3.2).
//   3. No decoded code point is: a C0 or C1 control or DEL; a space or separator (U+00A0,
//      U+1680, U+2000-U+200B, U+2028-U+202F, U+205F-U+206F, U+3000, U+FEFF); a joiner (U+200C,
//      U+200D: CONTEXTJ, their context rules are not implemented); a full stop look-alike
//      (U+3002, U+FF0E, U+FF61: label separators to UTS #46 clients); Latin-1 punctuation and
//      symbols (U+00A1-U+00BF, U+00D7, U+00F7; U+00B7 is CONTEXTO and refused too); an
//      upper-case letter of Latin-1 (U+00C0-U+00DE), Greek (U+0391-U+03AB) or Cyrillic
//      (U+0400-U+042F) (IDNA2008 takes only case-folded forms); general punctuation, letterlike
//      symbols, arrows, mathematical operators, technical symbols, box drawing, dingbats and the
//      other symbol blocks U+2010-U+2BFF; CJK symbols and punctuation U+3001-U+303F; variation
//      selectors (U+FE00-U+FE0F, U+E0100-U+E01EF); small, half- and full-width forms
//      (U+FE10-U+FE6F, U+FF00-U+FFEF); specials U+FFF0-U+FFFF; private use (U+E000-U+F8FF,
//      planes 15-16); tags (U+E0000-U+E007F); noncharacters (U+FDD0-U+FDEF, U+xFFFE/U+xFFFF);
//      emoji and pictographs (U+1F000-U+1FAFF).
// Not checked: unassigned code points, the Bidi rule (RFC 5893), script mixing and NFC. Such a
// label still names exactly one DNS label: the DNS compares the ASCII form, and the allowlist
// compares it too, so these cost look-alike protection only, not a bypass.
#pragma once

#include <string_view>

namespace policy {

// `label` is one lower-case label starting with "xn--".
bool is_valid_a_label(std::string_view label);

}  // namespace policy
