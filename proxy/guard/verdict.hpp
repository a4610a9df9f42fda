// What the guard's check of a change found, as the paths that refuse,
// carry over or ask about a change hand it on.
#pragma once

#include <optional>
#include <string>

#include "tracker/file_state.hpp"
#include "tracker/veto.hpp"

namespace fsguard {

// A version of a file fsguard showed the agent in full (a veto's complete
// diff over what it read whole).
struct ShownVersion {
  std::string file;
  Fingerprint fingerprint;
  std::string text;
};
// What the check of a change found: a veto, or none; the veto a stale
// change would have had when fsguard carried it over instead.
struct Verdict {
  std::optional<Veto> veto;
  std::optional<ShownVersion> shown; // the veto shows the agent this version
  std::optional<Veto> carried_over;  // rebased or merged despite this
};

} // namespace fsguard
