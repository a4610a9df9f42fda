// Watches the config file for changes with inotify on its directory, since
// editors save by writing a new file and renaming it over the old one. A
// config that is a symlink (dotfiles managers) is watched along its links,
// so a change of the file it points to reloads it too.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>

#include <boost/asio/io_context.hpp>

#include "proxy/process/executor.hpp"
#include "tracker/result.hpp"

namespace fsguard {

class ConfigWatch {
public:
  // Starts watching `file`'s directory. Errors say why it cannot.
  static Result<std::unique_ptr<ConfigWatch>, std::string> start(boost::asio::io_context& context,
                                                                 const std::string& file);

  // Returns once `file` may have changed (created, written, renamed over or
  // deleted), after a short pause that lets a burst of events settle.
  // Returns false if the watch broke.
  Task<bool> next_change();

private:
  ConfigWatch(boost::asio::io_context& context, int fd, std::string file);
  // Watches the directory of every name on the way from the config file to
  // the file it finally names. Errors say why one cannot be watched.
  Result<bool, std::string> watch_chain();
  bool names_our_file(const char* events, std::size_t size) const;

  Descriptor m_events;
  std::string m_file;                           // absolute, as given
  std::map<int, std::set<std::string>> m_names; // watch -> names inside it
};

} // namespace fsguard
