// A line on its way to the upstream, owned or borrowed: the client's line
// goes on from the LineReader's buffer, uncopied, when the guard forwards
// it at once, and is copied only when someone keeps it.
#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace fsguard {

// Either a string of its own (fsguard's own lines, and every line it kept),
// or the client's line borrowed where the LineReader holds it, valid only
// until the reader reads on. Move-only: one owner at a time. Whoever keeps
// a line past the handling of the client line it came with keeps take()'s
// string (a held call, a question to the person), and the Outbox makes its
// lines owned before its flush waits (Outbox::own_lines).
class OutgoingLine {
public:
  OutgoingLine() = default;
  // A line of its own, `owned` (implicit: fsguard's own lines are strings).
  OutgoingLine(std::string owned) noexcept : m_owned(std::move(owned)) {}
  OutgoingLine(OutgoingLine&&) noexcept = default;
  OutgoingLine& operator=(OutgoingLine&&) noexcept = default;
  OutgoingLine(const OutgoingLine&) = delete;
  OutgoingLine& operator=(const OutgoingLine&) = delete;

  // `text` borrowed from a buffer that stays as it is until the line is
  // written or owned (own(), take()).
  static OutgoingLine borrowed(std::string_view text) noexcept
  {
    OutgoingLine line;
    line.m_borrowed = text;
    line.m_is_borrowed = true;
    return line;
  }

  std::string_view text() const noexcept
  {
    return m_is_borrowed ? m_borrowed : std::string_view(m_owned);
  }

  bool is_borrowed() const noexcept { return m_is_borrowed; }

  // Copies a borrowed text into a string of the line's own; an owned line
  // stays as it is.
  void own()
  {
    if (m_is_borrowed) {
      m_owned.assign(m_borrowed);
      m_borrowed = {};
      m_is_borrowed = false;
    }
  }

  // The text as a string of its own: an owned line's string, moved; a
  // borrowed line's text, copied.
  std::string take() &&
  {
    own();
    return std::move(m_owned);
  }

  // Drops the first `count` bytes of the text (written already).
  void drop_front(std::size_t count)
  {
    if (m_is_borrowed) {
      m_borrowed.remove_prefix(count);
    } else {
      m_owned.erase(0, count);
    }
  }

  friend bool operator==(const OutgoingLine& line, std::string_view text) noexcept
  {
    return line.text() == text;
  }

private:
  std::string m_owned;
  std::string_view m_borrowed;
  bool m_is_borrowed = false;
};

} // namespace fsguard
