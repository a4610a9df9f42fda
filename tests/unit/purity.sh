#!/usr/bin/env bash
# The pure libraries (tracker, proxy/jsonrpc, proxy/guard) make no system
# call and read no clock: every fact from outside comes in through their
# arguments or the Disk interface. This lists the symbols each static
# library leaves undefined and fails on any that would reach the kernel or
# the clock (the C library's system-call wrappers, the C++ library's
# files, threads and clocks, Asio, Boost.Process).
# Usage: purity.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: purity.sh BUILD_DIR}
forbidden='^(open|open64|openat|openat2|read|write|pread|pread64|pwrite|close|stat|stat64|fstat|fstat64|lstat|lstat64|fstatat|fstatat64|statx|access|faccessat|readlink|readlinkat|realpath|getcwd|mkdir|rename|renameat|unlink|unlinkat|fopen|fopen64|fread|fwrite|fclose|opendir|readdir|readdir64|closedir|mmap|mmap64|munmap|ioctl|fcntl|fcntl64|poll|select|epoll_wait|socket|connect|send|recv|fork|execve|execvp|kill|waitpid|syscall|dlopen|getenv|secure_getenv|time|gettimeofday|clock_gettime|nanosleep|usleep|sleep|getpid|getrandom|rand|random)$'
forbidden_cxx='std::chrono::_V2::(steady|system)_clock::now|std::filesystem|boost::asio|boost::process|basic_[io]?fstream|std::thread|std::random_device|std::this_thread'
status=0
for lib in libtracker.a libjsonrpc.a libguard.a; do
  path="$build/$lib"
  if [[ ! -f $path ]]; then
    echo "purity: $path is missing; build the tracker, jsonrpc and guard libraries first" >&2
    exit 2
  fi
  undefined=$(nm -u --format=just-symbols "$path" | sort -u)
  calls=$(grep -E "$forbidden" <<<"$undefined" || true)
  cxx=$(c++filt <<<"$undefined" | grep -E "$forbidden_cxx" || true)
  if [[ -n $calls || -n $cxx ]]; then
    echo "purity: $lib is not pure; it calls:" >&2
    [[ -z $calls ]] || sed 's/^/  /' <<<"$calls" >&2
    [[ -z $cxx ]] || sed 's/^/  /' <<<"$cxx" >&2
    status=1
  else
    echo "purity: $lib calls nothing that reaches the kernel or the clock"
  fi
done
exit $status
