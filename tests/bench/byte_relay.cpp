// fsguard_byte_relay: the physical-limit baseline of the benchmark.
//
//     fsguard_byte_relay -- <command> [args...]
//
// Starts `command` with pipes on its stdin and stdout, copies stdin to the
// child's stdin and the child's stdout to stdout, byte for byte, with one
// poll() loop and 256 KiB buffers. No framing, no parsing: whatever fsguard
// costs above this process is the price of the guard itself. stderr is
// inherited; the exit status is the child's (128+signal if it was killed).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace {

constexpr std::size_t k_buffer_bytes = 256 * 1024;

// One direction of the relay: bytes read from `from` wait in `buffer`
// (between `start` and `end`) until `to` takes them.
struct Pipe {
  int from = -1;
  int to = -1;
  char* buffer = nullptr;
  std::size_t start = 0;
  std::size_t end = 0;
  bool input_done = false;  // `from` reached EOF or failed
  bool output_dead = false; // `to` failed (EPIPE): drop what comes
  bool closed = false;      // `to` has been closed

  bool pending() const { return end > start; }
};

[[noreturn]] void die(const char* what)
{
  std::fprintf(stderr, "fsguard_byte_relay: %s: %s\n", what, std::strerror(errno));
  std::exit(1);
}

void set_nonblocking(int fd)
{
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    die("fcntl");
  }
}

// Writes what is pending without blocking; true if progress was made.
bool flush(Pipe& pipe)
{
  bool progress = false;
  while (pipe.pending()) {
    if (pipe.output_dead) {
      pipe.start = pipe.end = 0;
      return true;
    }
    const ssize_t count = ::write(pipe.to, pipe.buffer + pipe.start, pipe.end - pipe.start);
    if (count < 0) {
      if (errno == EINTR) {
        continue;
      }
      if (errno == EAGAIN) {
        break;
      }
      pipe.output_dead = true; // EPIPE and the like: the reader is gone
      continue;
    }
    pipe.start += static_cast<std::size_t>(count);
    progress = true;
  }
  if (!pipe.pending()) {
    pipe.start = pipe.end = 0;
  }
  return progress;
}

// Reads once from `from` into the empty buffer, then tries to pass it on.
void fill(Pipe& pipe)
{
  const ssize_t count = ::read(pipe.from, pipe.buffer, k_buffer_bytes);
  if (count < 0) {
    if (errno == EINTR || errno == EAGAIN) {
      return;
    }
    pipe.input_done = true;
    return;
  }
  if (count == 0) {
    pipe.input_done = true;
    return;
  }
  pipe.start = 0;
  pipe.end = static_cast<std::size_t>(count);
  flush(pipe);
}

void close_output_when_done(Pipe& pipe)
{
  if (!pipe.closed && (pipe.input_done || pipe.output_dead) && !pipe.pending()) {
    ::close(pipe.to);
    pipe.closed = true;
  }
}

pid_t spawn(char** command, int child_stdin, int child_stdout, int parent_stdin,
            int parent_stdout)
{
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    die("fork");
  }
  if (pid == 0) {
    // Die with the relay, as fsguard's upstream does.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) {
      ::_exit(127);
    }
    ::signal(SIGPIPE, SIG_DFL);
    if (::dup2(child_stdin, STDIN_FILENO) < 0 || ::dup2(child_stdout, STDOUT_FILENO) < 0) {
      ::_exit(127);
    }
    ::close(child_stdin);
    ::close(child_stdout);
    ::close(parent_stdin);
    ::close(parent_stdout);
    ::execvp(command[0], command);
    std::fprintf(stderr, "fsguard_byte_relay: cannot run %s: %s\n", command[0],
                 std::strerror(errno));
    ::_exit(127);
  }
  return pid;
}

} // namespace

int main(int argc, char** argv)
{
  int first = 1;
  if (first < argc && std::strcmp(argv[first], "--") == 0) {
    ++first;
  }
  if (first >= argc) {
    std::fprintf(stderr, "usage: fsguard_byte_relay -- <command> [args...]\n");
    return 2;
  }
  ::signal(SIGPIPE, SIG_IGN);

  int to_child[2];   // relay writes [1], child reads [0]
  int from_child[2]; // child writes [1], relay reads [0]
  if (::pipe2(to_child, O_CLOEXEC) != 0 || ::pipe2(from_child, O_CLOEXEC) != 0) {
    die("pipe2");
  }
  const pid_t child = spawn(argv + first, to_child[0], from_child[1], to_child[1], from_child[0]);
  ::close(to_child[0]);
  ::close(from_child[1]);

  static char upstream_buffer[k_buffer_bytes];
  static char downstream_buffer[k_buffer_bytes];
  Pipe up{STDIN_FILENO, to_child[1], upstream_buffer};
  Pipe down{from_child[0], STDOUT_FILENO, downstream_buffer};
  for (int fd : {STDIN_FILENO, STDOUT_FILENO, to_child[1], from_child[0]}) {
    set_nonblocking(fd);
  }

  // The relay ends when the child's output has been passed on (or dropped).
  while (!down.closed) {
    pollfd fds[2];
    Pipe* owners[2];
    nfds_t count = 0;
    for (Pipe* pipe : {&up, &down}) {
      if (pipe->closed) {
        continue;
      }
      if (pipe->pending()) {
        fds[count] = pollfd{pipe->to, POLLOUT, 0};
      } else if (!pipe->input_done) {
        fds[count] = pollfd{pipe->from, POLLIN, 0};
      } else {
        continue;
      }
      owners[count++] = pipe;
    }
    if (count == 0) {
      break;
    }
    if (::poll(fds, count, -1) < 0) {
      if (errno == EINTR) {
        continue;
      }
      die("poll");
    }
    for (nfds_t index = 0; index < count; ++index) {
      if (fds[index].revents == 0) {
        continue;
      }
      Pipe& pipe = *owners[index];
      if (fds[index].events == POLLOUT) {
        if (!flush(pipe) && (fds[index].revents & (POLLERR | POLLHUP))) {
          pipe.output_dead = true;
          flush(pipe);
        }
      } else {
        fill(pipe);
      }
    }
    close_output_when_done(up);
    close_output_when_done(down);
    if (down.output_dead && !up.closed) {
      // The client is gone: let the child see EOF and finish.
      ::close(up.to);
      up.closed = true;
    }
  }
  if (!up.closed) {
    ::close(up.to);
  }

  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) {
      die("waitpid");
    }
  }
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}
