#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "tracker/file_state.hpp"
#include "tracker/veto.hpp"

using namespace fsguard;

TEST_SUITE("veto")
{
  TEST_CASE("every veto text names the tool and the file and says how to recover")
  {
    for (VetoCode code : {VetoCode::not_read, VetoCode::partial_read, VetoCode::changed,
                          VetoCode::changed_during_read, VetoCode::unresolved_path,
                          VetoCode::cannot_inspect, VetoCode::lossy_read}) {
      Veto veto;
      veto.code = code;
      veto.path = "/ws/notes.txt";
      veto.reason = "some reason";
      const std::string text = veto_text("write_file", veto);
      CAPTURE(text);
      CHECK(text.starts_with("fsguard refused write_file: "));
      CHECK(text.find("/ws/notes.txt") != std::string::npos);
      CHECK((text.find("Read it") != std::string::npos || text.find("absolute path") != std::string::npos
             || text.find("read it") != std::string::npos));
    }
  }

  TEST_CASE("the changed text gives both sizes and both times")
  {
    Veto veto;
    veto.code = VetoCode::changed;
    veto.path = "/ws/a.txt";
    veto.seen_size = 812;
    veto.current_size = 845;
    veto.seen_at_ns = 1'700'000'000'123'000'000LL;
    veto.current_mtime_ns = 1'700'000'060'000'000'000LL;
    const std::string text = veto_text("edit_file", veto);
    CHECK(text.find("size 812 -> 845 bytes") != std::string::npos);
    CHECK(text.find("last read 2023-11-14T22:13:20.123Z") != std::string::npos);
    CHECK(text.find("last modified 2023-11-14T22:14:20.000Z") != std::string::npos);
  }

  TEST_CASE("the changed text gives the size now alone where the size seen is unknown")
  {
    Veto veto;
    veto.code = VetoCode::changed;
    veto.path = "/ws/a.txt";
    veto.seen_size = k_unknown_size;
    veto.current_size = 845;
    const std::string text = veto_text("write_file", veto);
    CHECK(text.find("(size now 845 bytes;") != std::string::npos);
  }

  TEST_CASE("codes have stable names")
  {
    CHECK(to_string(VetoCode::not_read) == "not_read");
    CHECK(to_string(VetoCode::partial_read) == "partial_read");
    CHECK(to_string(VetoCode::changed) == "changed");
    CHECK(to_string(VetoCode::changed_during_read) == "changed_during_read");
    CHECK(to_string(VetoCode::unresolved_path) == "unresolved_path");
    CHECK(to_string(VetoCode::cannot_inspect) == "cannot_inspect");
    CHECK(to_string(VetoCode::lossy_read) == "lossy_read");
  }

  TEST_CASE("a fingerprint is racy only when a file time is near the moment it was taken")
  {
    Fingerprint fresh{FileStat{1, 2, 3, 1'000'000'000'000, 1'000'000'000'000, 0100644}, {}, 1'000'500'000'000};
    CHECK(racy(fresh));
    Fingerprint old{FileStat{1, 2, 3, 1'000'000'000'000, 1'000'000'000'000, 0100644}, {}, 1'010'000'000'000};
    CHECK_FALSE(racy(old));
    Fingerprint future{FileStat{1, 2, 3, 2'000'000'000'000, 1'000'000'000'000, 0100644}, {}, 1'010'000'000'000};
    CHECK(racy(future));
  }

  TEST_CASE("the lossy_read text says why the file cannot be rewritten as text, and what to do")
  {
    Veto veto;
    veto.code = VetoCode::lossy_read;
    veto.path = "/ws/latin1.txt";
    const std::string text = veto_text("write_file", veto);
    CHECK(text.find("/ws/latin1.txt is not valid UTF-8") != std::string::npos);
    CHECK(text.find("U+FFFD") != std::string::npos);
    CHECK(text.find("edit_file") != std::string::npos);
    CHECK(text.find("read its exact bytes with read_media_file") != std::string::npos);
  }

  TEST_CASE("a changed veto with a complete diff says that it counts as a read")
  {
    Veto veto;
    veto.code = VetoCode::changed;
    veto.path = "/ws/a.txt";
    veto.cause = "outside fsguard";
    veto.diff = "--- a\n+++ b\n@@ -1,1 +1,1 @@\n-x\n+y\n";
    veto.diff_complete = true;
    veto.counts_as_read = true;
    const std::string text = veto_text("edit_file", veto);
    CHECK(text.find("modified outside fsguard since you last read or wrote it") != std::string::npos);
    CHECK(text.find("```diff\n--- a\n+++ b\n@@ -1,1 +1,1 @@\n-x\n+y\n```\n") != std::string::npos);
    CHECK(text.find("This diff counts as your read") != std::string::npos);
    veto.diff_complete = false;
    veto.counts_as_read = false;
    const std::string cut = veto_text("edit_file", veto);
    CHECK(cut.find("(cut: longer than fsguard shows)") != std::string::npos);
    CHECK(cut.find("does not count as a read. Read it with read_text_file") != std::string::npos);
  }

  TEST_CASE("the changed text never dates the change before the read")
  {
    Veto veto;
    veto.code = VetoCode::changed;
    veto.path = "/ws/a.txt";
    veto.seen_at_ns = 1'700'000'000'148'000'000LL;
    veto.current_mtime_ns = 1'700'000'000'147'000'000LL; // landed while the read was answered
    const std::string text = veto_text("edit_file", veto);
    CAPTURE(text);
    CHECK(text.find("last modified") == std::string::npos);
    CHECK(text.find("its modification time, 2023-11-14T22:13:20.147Z, does not show when it changed")
          != std::string::npos);
  }

  TEST_CASE("the recovery of an image or a sound names the media read")
  {
    Veto veto;
    veto.code = VetoCode::not_read;
    for (const char* path : {"/ws/logo.png", "/ws/Photo.JPEG", "/ws/a.d/clip.mp3"}) {
      veto.path = path;
      CHECK(veto_text("write_file", veto).ends_with("Read it with read_media_file, then retry."));
    }
    for (const char* path : {"/ws/notes.txt", "/ws/png", "/ws/a.png/readme"}) {
      veto.path = path;
      CHECK(veto_text("write_file", veto).ends_with(
        "Read it with read_text_file (without head or tail), then retry."));
    }
    ToolNames names; // a profile without a media read names its text read
    names.read_bytes.clear();
    veto.path = "/ws/logo.png";
    CHECK(veto_text("write_file", veto, names).ends_with(
      "Read it with read_text_file (without head or tail), then retry."));
  }

  TEST_CASE("texts name the tools they are given")
  {
    ToolNames names;
    names.read = "read_file";
    names.read_whole.clear();
    names.read_bytes.clear();
    names.edit = "edit_block";
    Veto veto;
    veto.code = VetoCode::not_read;
    veto.path = "/ws/a.txt";
    CHECK(veto_text("write_file", veto, names).ends_with("Read it with read_file, then retry."));
    veto.code = VetoCode::lossy_read;
    const std::string lossy = veto_text("write_file", veto, names);
    CHECK(lossy.find("edit_block too") != std::string::npos);
    CHECK(lossy.find("read_media_file") == std::string::npos);
    CHECK(lossy.find("read_text_file") == std::string::npos);
  }

  TEST_CASE("the unknown_outcome text is only its own")
  {
    Veto veto;
    veto.code = VetoCode::unknown_outcome;
    veto.path = "/ws/a.txt";
    const std::string text = veto_text("write_file", veto);
    CHECK(text.ends_with("Read it again, then retry."));
    CHECK(text.find("UTF-8") == std::string::npos);
  }

  TEST_CASE("a diff with backticks gets a longer fence")
  {
    CHECK(fenced_diff("+```js\n") == "````diff\n+```js\n````\n");
    CHECK(fenced_diff("+x") == "```diff\n+x\n```\n");
  }

  TEST_CASE("docs/vetoes.md gives the not_visible text as fsguard writes it")
  {
    Veto veto;
    veto.code = VetoCode::not_visible;
    veto.path = "<path>";
    veto.reason = "<directory>";
    veto.cause = "<why>";
    std::ifstream file(FSGUARD_SOURCE_DIR "/docs/vetoes.md");
    std::stringstream doc;
    doc << file.rdbuf();
    const std::string text = veto_text("<tool>", veto);
    CAPTURE(text);
    CHECK(doc.str().find("`" + text + "`") != std::string::npos);
  }
}
