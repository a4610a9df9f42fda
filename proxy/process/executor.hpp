// The one executor a session runs on: the io_context's own, named by its
// concrete type in every coroutine, descriptor and timer. Asio's defaults
// (awaitable<T>, use_awaitable, posix::stream_descriptor, steady_timer)
// hold an any_io_executor instead, whose type erasure puts an indirect call,
// and often a copy, in every read, write and wait: with it, a call ran
// about 120 instructions more (1 to 1.5 % of list_directory's) and touched
// 2 to 5 % more code (lines a 16 KiB cache misses; tests/bench/per_call.mjs).
#pragma once

#include <chrono>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/basic_waitable_timer.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/basic_stream_descriptor.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace fsguard {

// The io_context's executor, which every Task, Descriptor and Timer holds.
using Executor = boost::asio::io_context::executor_type;

// A coroutine on the session's executor. It can co_await other Tasks but not
// Asio's default awaitable<T>, nor be co_awaited by one.
template <class T>
using Task = boost::asio::awaitable<T, Executor>;

// A pipe end, terminal or socket that the session reads or writes.
using Descriptor = boost::asio::posix::basic_stream_descriptor<Executor>;

// A steady-clock timer on the session's executor.
using Timer = boost::asio::basic_waitable_timer<
  std::chrono::steady_clock, boost::asio::wait_traits<std::chrono::steady_clock>, Executor>;

// The completion token of a Task's waits: the error comes back as a value
// (EOF and cancellation are normal returns), never as an exception.
inline constexpr auto k_use = boost::asio::as_tuple(boost::asio::use_awaitable_t<Executor>());

} // namespace fsguard
