// The one ledger of requests in flight, in both directions: who sent each,
// its id, its method and what fsguard expects of its answer. An answer
// counts only for the pending request it answers: same id, from the other
// peer, still pending. Pure bookkeeping: no I/O.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "proxy/guard/call_in_flight.hpp"
#include "proxy/guard/override_round_trip.hpp"
#include "tracker/string_key_hash.hpp"

namespace fsguard {

// Who sent a request. fsguard's own requests go to the upstream under ids
// of their own (k_own_id_prefix), so they never collide with the client's.
enum class Peer { client, upstream, fsguard };

// What fsguard does with the answer to a request.
enum class Expectation {
  relay,          // nothing: it goes to the requester as it is
  initialize,     // the server's initialize result: which server it is
  discover,       // the server's server/discover result (2026 era): the same; fsguard's own too
  guarded_call,   // a guarded tools/call: record what it read or wrote
  own_listing,    // fsguard's list_allowed_directories: read, never relayed
  client_listing, // the client's list_allowed_directories: read and relayed
  roots,          // the client's answer to the server's roots/list
  own_probe,      // fsguard's get_file_info of an allowed directory: never relayed
  override_answer, // the person's answer to fsguard's question to the client: never relayed
  own_verify,     // fsguard's read of a file through the upstream (verify: upstream): never relayed
  own_identity,   // fsguard's get_file_info of a file before a change: never relayed
};

struct PendingRequest {
  Peer from = Peer::client;
  nlohmann::json id;
  std::string method;
  Expectation expect = Expectation::relay;
  std::uint64_t listing_sequence = 0;  // own_listing / client_listing
  std::string probed;                  // own_probe: the server's directory
  // guarded_call: on the heap from its description on, so that it moves
  // into the entry, and out of it, as a pointer
  std::unique_ptr<CallInFlight> call;
  bool cancelled = false;              // the client cancelled it
  // A client request of the 2026 era whose own envelope declares form
  // elicitation (fsguard may ask the person in its answer).
  bool envelope_elicits = false;
  // guarded_call: the retry of a call that answers fsguard's own question
  // to the person in the 2026 era (or the server's, after the person
  // allowed the change); null for any other call
  std::unique_ptr<OverrideRetry> retry;
};

class Ledger {
  using Table = std::unordered_map<std::string, PendingRequest, StringKeyHash>;

public:
  // The pending request an answer answers, as find_answered() found it:
  // request() is null when it answers nothing pending. close() and
  // close_if() take it out without looking it up again. It holds only
  // until the ledger next changes.
  class Answered {
  public:
    Answered() = default;
    // Move-only: a copy left behind by close() would take the entry twice.
    Answered(const Answered&) = delete;
    Answered& operator=(const Answered&) = delete;
    Answered(Answered&& other) noexcept
      : m_table(other.m_table), m_at(other.m_at),
        m_request(std::exchange(other.m_request, nullptr))
    {
    }
    Answered& operator=(Answered&& other) noexcept
    {
      m_table = other.m_table;
      m_at = other.m_at;
      m_request = std::exchange(other.m_request, nullptr);
      return *this;
    }

    PendingRequest* request() const { return m_request; }

  private:
    friend class Ledger;
    Table* m_table = nullptr;
    Table::iterator m_at{}; // value-initialized: copied by a move even when unset
    PendingRequest* m_request = nullptr;
  };

  // Records `request` under `key` (its id_key) and returns the entry, which
  // stays where it is until it is closed. Returns null, and records nothing,
  // when a request with that key is still pending in the same direction:
  // the MCP specification forbids reusing an id in a session.
  PendingRequest* open(const std::string& key, PendingRequest&& request);
  // Records fsguard's own `request` to the client under `key`.
  bool open_toward_client(const std::string& key, PendingRequest request)
  {
    return m_toward_client.try_emplace(key, std::move(request)).second;
  }

  // The pending request that an answer from `answering` with id `key`
  // answers, or null if there is none.
  PendingRequest* find(Peer answering, const std::string& key);
  const PendingRequest* find(Peer answering, const std::string& key) const;

  // The pending request that an answer from `answering` with id `key`
  // answers, to be read and closed with one lookup.
  Answered find_answered(Peer answering, const std::string& key);

  // What close() takes out: empty when nothing was pending, else the
  // request as mapped(), taken out whole (its node moves, nothing is copied).
  using Closed = Table::node_type;

  // Removes and returns the request that `answering`'s answer `key` answers.
  Closed close(Peer answering, const std::string& key)
  {
    return close(find_answered(answering, key));
  }
  // Removes and returns the request `answered` found (its request() is null
  // after).
  Closed close(Answered& answered);
  Closed close(Answered&& answered) { return close(answered); }

  // Takes back `closed`, a request close() took out and its taker is done
  // with, to hold the next request opened (its call is freed now).
  void recycle(Closed closed)
  {
    if (!closed.empty()) {
      closed.mapped().call.reset();
      m_spare = std::move(closed);
    }
  }

  // Removes the request that `answering`'s answer `key` answers when what
  // fsguard expects of that answer is `expect`; true if it did (one lookup,
  // where find() and close() take two).
  bool close_if(Peer answering, const std::string& key, Expectation expect)
  {
    auto answered = find_answered(answering, key);
    return close_if(answered, expect);
  }
  // The same for the request `answered` found.
  bool close_if(Answered& answered, Expectation expect);

  // Marks the client's pending request `key` cancelled and returns it (null
  // if there is none). It stays in the ledger: the server may still answer,
  // and its id may not be reused meanwhile. The oldest cancelled entries
  // are dropped beyond a bound, so a server that never answers a cancelled
  // request cannot make the ledger grow without limit.
  PendingRequest* cancel(const std::string& key);

  // True once the client has sent an initialize request that did not fail.
  bool initialize_seen() const { return m_initialize_seen; }
  // The server answered the client's initialize with an error: it may be
  // sent again.
  void initialize_failed() { m_initialize_seen = false; }

  // Removes and returns the client's requests still waiting for the
  // upstream (not cancelled), e.g. to answer them when the upstream died.
  std::vector<PendingRequest> take_client_requests();

  // The client's guarded calls still pending, for expiry.
  template <class Visit> void for_each_guarded_call(Visit visit)
  {
    for (auto& [key, request] : m_toward_upstream) {
      if (request.call) {
        visit(key, request);
      }
    }
  }

  // The most cancelled requests kept waiting for a late answer.
  static constexpr std::size_t k_max_cancelled = 10'000;

private:
  // The table of the requests that `answering`'s answers answer.
  Table& answered_by(Peer answering)
  {
    return answering == Peer::upstream ? m_toward_upstream : m_toward_client;
  }
  const Table& answered_by(Peer answering) const
  {
    return answering == Peer::upstream ? m_toward_upstream : m_toward_client;
  }

  Table m_toward_upstream; // client's, fsguard's
  Table m_toward_client;   // the upstream's
  std::deque<std::string> m_cancelled;                                // oldest first
  // The node of the last request close_if() closed (one fsguard only
  // relays) or recycle() took back, its call freed, kept to hold the next
  // request opened: a call allocates no node.
  Closed m_spare;
  bool m_initialize_seen = false;
};

} // namespace fsguard
