// What fsguard learns of a file's bytes in the same pass that hashes them:
// whether a text view of them is exact, and how Node's readline splits them.
#pragma once

#include <cstddef>
#include <string_view>

namespace fsguard {

// Properties of a file's content that decide what a read of it showed.
struct ContentTraits {
  // The bytes are valid UTF-8 (RFC 3629). If not, a server that decodes them
  // as UTF-8 shows U+FFFD in place of some of them: a lossy view.
  bool valid_utf8 = true;
  // A "\r" not followed by "\n" is in the bytes. Node's readline ends a line
  // there, where a count of "\n" does not.
  bool bare_cr = false;

  bool operator==(const ContentTraits&) const = default;
};

// Finds the ContentTraits of bytes fed in pieces, as they are hashed.
class ContentScanner {
public:
  // Starts on new content.
  void reset() { *this = ContentScanner(); }
  // Scans the next `bytes` of the content.
  void append(std::string_view bytes);
  // The traits of everything appended since the last reset.
  ContentTraits traits() const;

private:
  void scan_utf8(std::string_view bytes);
  void scan_carriage_returns(std::string_view bytes);

  int m_continuations = 0;         // of the UTF-8 sequence begun, still to come
  unsigned char m_next_low = 0x80; // the range the next of them must fall in
  unsigned char m_next_high = 0xBF;
  bool m_invalid = false;
  bool m_bare_cr = false;
  bool m_ends_with_cr = false;     // the last piece ended with "\r"
};

// The ContentTraits of `bytes` held at once.
ContentTraits content_traits(std::string_view bytes);

} // namespace fsguard
