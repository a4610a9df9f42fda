// Lines that the guard wants sent, collected while it handles one message.
#pragma once

#include <string>
#include <vector>

namespace fsguard {

struct Outbox {
  std::vector<std::string> to_upstream;
  std::vector<std::string> to_client;
  std::vector<std::string> answered; // id_keys of requests fsguard answered itself
};

} // namespace fsguard
