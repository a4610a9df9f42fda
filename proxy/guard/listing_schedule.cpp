#include "proxy/guard/listing_schedule.hpp"

#include <algorithm>

namespace fsguard {

void ListingSchedule::ask_for_call(Clock::time_point now, Outbox& out)
{
  if (!m_paths.listing_in_flight() && !m_paths.probing() && m_tries < k_most_tries) {
    ask(now, out);
  }
}

bool ListingSchedule::tick(Clock::time_point now, Outbox& out)
{
  bool gave_up = false;
  if (!m_paths.listing_in_flight() && !m_paths.probing()) {
    m_wait_since.reset();
  } else if (!m_wait_since) {
    m_wait_since = now;
  } else if (now - *m_wait_since > k_listing_timeout) {
    out.say(LogLevel::warn, "the upstream did not answer fsguard's list_allowed_directories "
                            "or get_file_info within 5 s; asking again");
    m_paths.give_up_listings();
    m_wait_since.reset();
    gave_up = true;
  }
  if (!m_paths.in_doubt()) {
    m_next.reset();
    m_pause = k_first_pause;
    m_tries = 0;
    return gave_up;
  }
  if (!m_next) {
    m_next = now + m_pause;
  } else if (now >= *m_next && m_paths.wants_listing() && m_tries < k_most_tries) {
    ask(now, out);
  }
  return gave_up;
}

void ListingSchedule::ask(Clock::time_point now, Outbox& out)
{
  m_paths.ask_for_listing(out);
  ++m_tries;
  m_pause = std::min(m_pause * 2, k_longest_pause);
  m_next = now + m_pause;
}

} // namespace fsguard
