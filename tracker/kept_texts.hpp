// The texts the agent has seen whole, kept within a memory budget so that a
// later change to the file can be shown as a diff, and a stale edit or write
// can be carried over to the current content. Keyed by content hash: a text
// serves exactly the records whose hash is its own.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "tracker/file_state.hpp"
#include "tracker/text_bytes.hpp"

namespace fsguard {

// How much memory kept texts may take: no text longer than `file_bytes`,
// and no more than `total_bytes` in all (each text also costs
// KeptTexts::k_entry_bytes of bookkeeping). A total of 0 keeps nothing.
struct KeptTextBudget {
  std::size_t file_bytes = 1024 * 1024;
  std::size_t total_bytes = 32 * 1024 * 1024;
  bool operator==(const KeptTextBudget&) const = default;
};

class KeptTexts {
public:
  // Room beyond its length a kept text may hold (more is given back).
  static constexpr std::size_t k_spare_bytes = 64;
  // What one kept text costs besides its bytes (nodes, its TextBytes).
  static constexpr std::size_t k_entry_bytes = 128;

  explicit KeptTexts(KeptTextBudget budget = {}) : m_budget(budget) {}
  // The order of use links the map's entries to each other: moved whole,
  // never copied.
  KeptTexts(KeptTexts&& other) noexcept;
  KeptTexts& operator=(KeptTexts&& other) noexcept;
  KeptTexts(const KeptTexts&) = delete;
  KeptTexts& operator=(const KeptTexts&) = delete;

  // Applies `budget`, dropping the least recently used texts past it.
  void set_budget(KeptTextBudget budget);
  const KeptTextBudget& budget() const { return m_budget; }

  // Keeps `text`, whose content hash is `hash` (the caller has checked it),
  // dropping the least recently used texts to make room. False, and
  // nothing kept, when `text` alone is over the budget.
  bool keep(const ContentHash& hash, TextBytes text);

  // The text whose hash is `hash`, if kept; it becomes the most recently
  // used. Valid until the next keep() or set_budget().
  std::optional<std::string_view> find(const ContentHash& hash);

  // The bytes the kept texts take, bookkeeping included.
  std::size_t bytes() const { return m_bytes; }
  // How many texts are kept.
  std::size_t size() const { return m_index.size(); }

private:
  struct HashKey {
    std::size_t operator()(const ContentHash& hash) const
    {
      return static_cast<std::size_t>(hash[0] ^ (hash[1] * 0x9e3779b97f4a7c15ULL));
    }
  };
  // A kept text, linked to the texts used just before and after it. The
  // links live in the map's own nodes, which never move: one allocation a
  // text (a std::list beside the map took two).
  struct Entry {
    TextBytes text;
    const ContentHash* hash = nullptr; // its key in the map
    Entry* newer = nullptr;
    Entry* older = nullptr;
  };

  // Takes `entry` out of the order of use, and puts it first.
  void unlink(Entry& entry);
  void push_newest(Entry& entry);
  // Drops the least recently used text.
  void drop_oldest();
  void shrink_to(std::size_t total);
  // The memory a text holds, which can exceed its length (by at most a
  // quarter and k_spare_bytes, once kept).
  static std::size_t cost(const TextBytes& text) { return text.capacity() + k_entry_bytes; }

  KeptTextBudget m_budget;
  std::unordered_map<ContentHash, Entry, HashKey> m_index;
  Entry* m_newest = nullptr; // the order of use, most recent first
  Entry* m_oldest = nullptr;
  std::size_t m_bytes = 0;
};

} // namespace fsguard
