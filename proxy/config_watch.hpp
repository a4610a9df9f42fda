// Watches the config file for changes with inotify on its directory, since
// editors save by writing a new file and renaming it over the old one.
#pragma once

#include <memory>
#include <string>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

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
  boost::asio::awaitable<bool> next_change();

private:
  ConfigWatch(boost::asio::io_context& context, int fd, std::string name);
  bool names_our_file(const char* events, std::size_t size) const;

  boost::asio::posix::stream_descriptor m_events;
  std::string m_name; // the file's name inside the watched directory
};

} // namespace fsguard
