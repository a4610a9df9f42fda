// When fsguard asks the server for its allowed directories again, and how
// long a call waits for them: the one owner of that schedule, with one
// retry policy. While the directories are in doubt (a client's new roots,
// which the server adopts within milliseconds, or a listing unanswered),
// fsguard asks again after a pause that doubles from 50 ms to 2 s, at most
// 12 times in one doubt (about 15 s in all). A call whose path needs the
// directories waits while tries remain, and is decided with what is known
// once they are spent, or after call_timeout_s. A listing unanswered for
// 5 s is given up on, so the next try can go. (Before, calls that waited
// had a policy of their own: up to 50 listings asked back to back.)
#pragma once

#include <chrono>
#include <optional>

#include "proxy/guard/outbox.hpp"
#include "proxy/guard/server_paths.hpp"

namespace fsguard {

class ListingSchedule {
public:
  using Clock = std::chrono::steady_clock;

  static constexpr int k_most_tries = 12;
  static constexpr std::chrono::milliseconds k_first_pause{50};
  static constexpr std::chrono::milliseconds k_longest_pause{2000};
  // How long fsguard waits for the answer to one of its listings.
  static constexpr std::chrono::seconds k_listing_timeout{5};

  // `paths` asks the listings and knows whether the directories are in doubt.
  explicit ListingSchedule(ServerPaths& paths) : m_paths(paths) {}

  // Whether a call that needs the directories waits for them: tries remain
  // in this doubt, and no caller lifted the waits (lift_waits()).
  bool calls_wait() const { return m_tries < k_most_tries && !m_waits_lifted; }
  // While true, calls_wait() is false: calls waiting are decided now.
  void lift_waits(bool lifted) { m_waits_lifted = lifted; }

  // A call needs the directories at `now`: asks at once (a try) unless a
  // listing or a probe is on its way.
  void ask_for_call(Clock::time_point now, Outbox& out);

  // What time does at `now`: a listing unanswered for k_listing_timeout
  // is given up on (returns true: the calls that waited for it are looked
  // at again), and while the directories are in doubt, the next try goes
  // when it is due.
  bool tick(Clock::time_point now, Outbox& out);

  // The tries asked in this doubt (tests and diagnostics).
  int tries() const { return m_tries; }

private:
  // Asks a listing at `now`, counting the try and doubling the pause.
  void ask(Clock::time_point now, Outbox& out);

  ServerPaths& m_paths;
  int m_tries = 0;
  std::chrono::milliseconds m_pause = k_first_pause;
  std::optional<Clock::time_point> m_next; // the next try, while in doubt
  std::optional<Clock::time_point> m_wait_since; // a listing or probe of ours in flight
  bool m_waits_lifted = false;
};

} // namespace fsguard
