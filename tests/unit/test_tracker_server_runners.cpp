#include <doctest/doctest.h>

#include "tracker/server_runners.hpp"

using namespace fsguard;

TEST_CASE("a container runtime, a sandbox or a remote shell is named by its program")
{
  CHECK(elsewhere_runner("docker") == "docker, a container runtime");
  CHECK(elsewhere_runner("/usr/bin/podman") == "podman, a container runtime");
  CHECK(elsewhere_runner("unshare") == "unshare, a sandbox with mounts of its own");
  CHECK(elsewhere_runner("ssh") == "ssh, a remote shell");
  CHECK(elsewhere_runner("wsl.exe") == "wsl, a virtual machine's shell");
  CHECK(elsewhere_runner("systemd-nspawn") == "systemd-nspawn, a container runtime");
  CHECK_FALSE(elsewhere_runner("node"));
  CHECK_FALSE(elsewhere_runner("npx"));
  CHECK_FALSE(elsewhere_runner("dockerd-helper"));
  CHECK_FALSE(elsewhere_runner(""));
}

TEST_CASE("the upstream command runs elsewhere when it starts with a runner, past launchers")
{
  CHECK(command_runs_elsewhere({"docker", "run", "-i", "--rm", "mcp/filesystem", "/projects"})
        == "the upstream command runs docker, a container runtime");
  CHECK(command_runs_elsewhere({"env", "-i", "FOO=1", "podman", "run", "x"})
        == "the upstream command runs podman, a container runtime");
  CHECK(command_runs_elsewhere({"sudo", "unshare", "-m", "sh", "-c", "node server.js"})
        == "the upstream command runs unshare, a sandbox with mounts of its own");
  CHECK(command_runs_elsewhere({"timeout", "600", "ssh", "host", "mcp-server"})
        == "the upstream command runs ssh, a remote shell");
  // Launcher options that take a value.
  CHECK(command_runs_elsewhere({"sudo", "-u", "bob", "docker", "run", "x"})
        == "the upstream command runs docker, a container runtime");
  CHECK(command_runs_elsewhere({"env", "-C", "/srv/app", "podman", "run", "x"})
        == "the upstream command runs podman, a container runtime");
  CHECK(command_runs_elsewhere({"timeout", "-s", "KILL", "60", "ssh", "host", "srv"})
        == "the upstream command runs ssh, a remote shell");
  CHECK(command_runs_elsewhere({"nice", "-n", "5", "unshare", "-m", "sh"})
        == "the upstream command runs unshare, a sandbox with mounts of its own");
  // Compose v1 and podman's compose run the container themselves: the
  // server's process is the engine's, never the upstream's.
  CHECK(command_runs_elsewhere({"docker-compose", "run", "--rm", "-T", "fs"})
        == "the upstream command runs docker-compose, a container runtime");
  CHECK(command_runs_elsewhere({"podman-compose", "run", "--rm", "fs"})
        == "the upstream command runs podman-compose, a container runtime");
  CHECK(command_runs_elsewhere({"devcontainer", "exec", "--workspace-folder", ".", "node", "s.js"})
        == "the upstream command runs devcontainer, a container runtime");
  CHECK(command_runs_elsewhere({"multipass", "exec", "vm", "--", "node", "s.js"})
        == "the upstream command runs multipass, a virtual machine's shell");
}

TEST_CASE("a command that runs the server here is not taken for one that runs elsewhere")
{
  CHECK_FALSE(command_runs_elsewhere({"npx", "-y", "@modelcontextprotocol/server-filesystem", "/home/me/docker"}));
  CHECK_FALSE(command_runs_elsewhere({"node", "dist/index.js", "docker"}));
  CHECK_FALSE(command_runs_elsewhere({"env", "NODE_OPTIONS=--x", "node", "docker"}));
  CHECK_FALSE(command_runs_elsewhere({}));
}
