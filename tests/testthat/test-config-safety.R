# mcp_config(write = TRUE) replaces files that hold people's client settings
# and often their API keys: every file it creates is new (no link followed),
# private from the start and owned as the original; a change made by another
# program meanwhile is not lost; a full disk leaves the file and its backup as
# they were; only the entry's own text changes, and it keeps one transport.
# The writer runs in an R process of its own (helper-config.R).

skip_on_os("windows")
skip_on_cran()
skip_if_not_installed("processx")
skip_if_not_installed("jsonlite")
skip_if_no_mcplite_child()

test_that("an existing backup that is a symbolic link is replaced, never followed", {
  script <- server_script("mcplite::mcp_server(list())")
  dir <- tempfile("cfg-")
  dir.create(dir)
  path <- file.path(dir, "mcp.json")
  bashrc <- file.path(dir, "bashrc")
  writeLines("export KEEP=1", bashrc)
  missing <- file.path(dir, "created-by-link")
  for (target in c(bashrc, missing)) {
    writeLines(c("{", "  \"servers\": {}", "}"), path)
    before <- readLines(path)
    unlink(paste0(path, ".bak"))
    file.symlink(target, paste0(path, ".bak"))
    out <- config_writer_output(config_writer(script, "vscode", path))
    expect_equal(out, "written")
    expect_equal(Sys.readlink(paste0(path, ".bak")), "")
    expect_equal(readLines(paste0(path, ".bak")), before)
  }
  expect_equal(readLines(bashrc), "export KEEP=1")
  expect_false(file.exists(missing))
})

test_that("the new file is private from the start: the config's mode while it is written", {
  script <- server_script("mcplite::mcp_server(list())")
  dir <- config_shared_dir()
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  path <- file.path(dir, "settings.json")
  writeLines(c("{", "  \"apiKey\": \"SECRET-123\"", "}"), path)
  writeLines("{\"apiKey\": \"OLD-SECRET\"}", paste0(path, ".bak"))
  Sys.chmod(c(path, paste0(path, ".bak")), "0600", use_umask = FALSE)
  pause <- tempfile("pause-")
  p <- config_writer(script, "gemini", path, pause = pause)
  on.exit({ config_go(pause); p$kill() }, add = TRUE)
  expect_true(config_pause(pause))
  temps <- setdiff(list.files(dir, all.files = TRUE, no.. = TRUE), c("settings.json", "settings.json.bak"))
  # The new file and the new backup.
  expect_length(temps, 2)
  expect_equal(as.character(file.info(file.path(dir, temps))$mode), c("600", "600"))
  config_go(pause)
  expect_equal(config_writer_output(p), "written")
  expect_equal(as.character(file.info(c(path, paste0(path, ".bak")))$mode), c("600", "600"))
})

test_that("another user cannot read the secrets of a 0600 config while it is being written", {
  second_user_skip()
  script <- server_script("mcplite::mcp_server(list())")
  dir <- config_shared_dir("0755")
  path <- file.path(dir, "settings.json")
  writeLines(c("{", "  \"apiKey\": \"SECRET-123\"", "}"), path)
  Sys.chmod(path, "0600", use_umask = FALSE)
  pause <- tempfile("pause-", tmpdir = dir)
  p <- config_writer(script, "gemini", path, pause = pause)
  on.exit({ config_go(pause); p$kill(); unlink(dir, recursive = TRUE) }, add = TRUE)
  expect_true(config_pause(pause))
  # What nobody sees in the directory, and tries to read.
  seen <- second_user_process("ls", c("-A", dir), stdout = "|", stderr = "|")
  seen$wait()
  names <- setdiff(seen$read_all_output_lines(), c("settings.json", basename(pause), paste0(basename(pause), ".ready.1")))
  expect_length(names, 2)
  for (name in names) {
    cat <- second_user_process("cat", file.path(dir, name), stdout = "|", stderr = "|")
    cat$wait()
    expect_false(cat$get_exit_status() == 0)
    expect_false(any(grepl("SECRET", cat$read_all_output_lines())))
  }
  config_go(pause)
  expect_equal(config_writer_output(p), "written")
})

test_that("run as root, the rewritten file keeps its owner, group and mode", {
  second_user_skip()
  script <- server_script("mcplite::mcp_server(list())")
  dir <- config_shared_dir("0755")
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  ids <- second_user_ids()
  path <- file.path(dir, "config.toml")
  writeLines("model = \"o3\"", path)
  Sys.chmod(path, "0640", use_umask = FALSE)
  # nobody's file in nobody's directory, as in its home.
  system2("chown", c(sprintf("%d:%d", ids[["uid"]], ids[["gid"]]), dir, path))
  out <- config_writer_output(config_writer(script, "codex", path))
  expect_equal(out, "written")
  for (f in c(path, paste0(path, ".bak"))) {
    info <- file.info(f, extra_cols = TRUE)
    expect_equal(c(info$uid, info$gid), unname(c(ids[["uid"]], ids[["gid"]])), label = f)
    expect_equal(as.character(info$mode), "640", label = f)
  }
  # Its owner reads it and can write it again.
  file.copy(script, file.path(dir, "server.R"))
  Sys.chmod(file.path(dir, "server.R"), "0644", use_umask = FALSE)
  res <- second_user_rscript(sprintf(
    "invisible(mcplite::mcp_config(%s, 'codex', name = 'again', write = TRUE, path = %s))",
    deparse(file.path(dir, "server.R")), deparse(path)))
  expect_equal(res$status, 0, info = res$stderr)
  expect_match(paste(readLines(path), collapse = "\n"), "[mcp_servers.again]", fixed = TRUE)
})

test_that("a user who cannot give the new file the original's owner is refused, nothing changed", {
  second_user_skip()
  script <- server_script("mcplite::mcp_server(list())")
  dir <- config_shared_dir("0777")
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  path <- file.path(dir, "mcp.json")
  writeLines("{}", path)
  Sys.chmod(path, "0666", use_umask = FALSE)
  file.copy(script, file.path(dir, "server.R"))
  Sys.chmod(file.path(dir, "server.R"), "0644", use_umask = FALSE)
  res <- second_user_rscript(sprintf(
    "tryCatch(mcplite::mcp_config(%s, 'cursor', name = 'x', write = TRUE, path = %s), error = function(e) { cat(class(e)[[1]], conditionMessage(e), sep = '\\n') })",
    deparse(file.path(dir, "server.R")), deparse(path)))
  out <- strsplit(res$stdout, "\n")[[1]]
  expect_equal(out[[1]], "mcplite_error_config_owner")
  expect_snapshot(cat(gsub(dir, "<dir>", out[-1], fixed = TRUE), sep = "\n"))
  expect_equal(readLines(path), "{}")
  expect_equal(list.files(dir, all.files = TRUE, no.. = TRUE), c("mcp.json", "server.R"))
})

test_that("a config file with several hard links is refused, saying why", {
  script <- server_script("mcplite::mcp_server(list())")
  dir <- tempfile("cfg-")
  dir.create(dir)
  path <- file.path(dir, "mcp.json")
  writeLines("{}", path)
  twin <- file.path(dir, "twin.json")
  file.link(path, twin)
  out <- config_writer_output(config_writer(script, "cursor", path))
  expect_equal(out[[1]], "mcplite_error_config_links")
  expect_snapshot(cat(gsub(dir, "<dir>", out[-1], fixed = TRUE), sep = "\n"))
  expect_equal(readLines(path), "{}")
  expect_equal(readLines(twin), "{}")
  expect_false(file.exists(paste0(path, ".bak")))
  # A symbolic link is followed and kept, as dotfiles managers make them.
  unlink(twin)
  link <- file.path(dir, "link.json")
  file.symlink(path, link)
  expect_equal(config_writer_output(config_writer(script, "cursor", link)), "written")
  expect_equal(Sys.readlink(link), path)
  expect_true("my-tools" %in% names(jsonlite::read_json(path)$mcpServers))
})

test_that("a change another program saves while the file is written is kept, or the write fails saying so", {
  script <- server_script("mcplite::mcp_server(list())")
  dir <- tempfile("cfg-")
  dir.create(dir)
  path <- file.path(dir, "settings.json")
  writeLines(c("{", "  \"mcpServers\": {}", "}"), path)
  pause <- tempfile("pause-")
  p <- config_writer(script, "gemini", path, pause = pause)
  on.exit({ for (i in 1:3) config_go(pause, i); p$kill() }, add = TRUE)
  expect_true(config_pause(pause, 1))
  # The client saves its own server meanwhile.
  client_saved <- c("{", "  \"mcpServers\": {", "    \"client-added\": {\"command\": \"node\"}", "  }", "}")
  writeLines(client_saved, path)
  config_go(pause, 1)
  # mcp_config() reads it again and merges into what the client saved.
  expect_true(config_pause(pause, 2))
  config_go(pause, 2)
  expect_equal(config_writer_output(p), "written")
  expect_equal(names(jsonlite::read_json(path)$mcpServers), c("client-added", "my-tools"))
  expect_equal(readLines(paste0(path, ".bak")), client_saved)

  # A program that saves it at every attempt: the write fails and says so;
  # the file holds that program's last save, the backup is untouched.
  backup <- readLines(paste0(path, ".bak"))
  pause <- tempfile("pause-")
  p <- config_writer(script, "gemini", path, pause = pause)
  on.exit({ for (i in 1:3) config_go(pause, i); p$kill() }, add = TRUE)
  for (i in 1:3) {
    expect_true(config_pause(pause, i))
    saved <- readLines(path)
    saved[[1]] <- paste0(strrep(" ", i), "{")
    writeLines(saved, path)
    config_go(pause, i)
  }
  out <- config_writer_output(p)
  expect_equal(out[[1]], "mcplite_error_config_changed")
  expect_snapshot(cat(gsub(dir, "<dir>", out[-1], fixed = TRUE), sep = "\n"))
  expect_equal(readLines(path), saved)
  expect_equal(readLines(paste0(path, ".bak")), backup)
  expect_equal(list.files(dir, all.files = TRUE, no.. = TRUE), c("settings.json", "settings.json.bak"))
})

test_that("a full disk leaves the file and its old backup as they were, and the error says so", {
  if (!nzchar(Sys.which("prlimit"))) skip("no prlimit (util-linux) to make a small file-size limit")
  limit <- 8192
  wrap <- c("prlimit", sprintf("--fsize=%d", limit), "--", "sh", "-c", "trap '' XFSZ; exec \"$0\" \"$@\"")
  probe <- processx::run(wrap[[1]], c(wrap[-1], "sh", "-c", sprintf("head -c %d /dev/zero > %s", limit + 1, shQuote(tempfile()))),
                         error_on_status = FALSE)
  if (probe$status == 0) skip("prlimit --fsize does not limit file sizes here")
  script <- server_script("mcplite::mcp_server(list())")
  dir <- tempfile("cfg-")
  dir.create(dir)
  path <- file.path(dir, "settings.json")
  files <- c(path, paste0(path, ".bak"))
  # A file larger than the limit whose new content fits: only the backup
  # does not fit (today's copy left the old backup cut short).
  big <- strrep("x", 3 * limit)
  writeLines(c("{", "  \"mcpServers\": {", sprintf("    \"my-tools\": {\"command\": \"old\", \"env\": {\"BIG\": \"%s\"}}", big), "  }", "}"), path)
  writeLines(c("{", sprintf("  \"older\": \"%s\"", big), "}"), files[[2]])
  # And a small file whose new content does not fit.
  small <- file.path(dir, "small.json")
  writeLines(c("{", sprintf("  \"note\": \"%s\"", strrep("y", limit - 200)), "}"), small)
  before <- lapply(c(files, small), readLines)
  # A new file in new directories: they go again.
  fresh <- file.path(dir, "new", "sub", "settings.json")
  for (case in list(list(path, NULL, "Cannot keep a backup of"), list(small, c(BIG = big), "Cannot write"),
                    list(fresh, c(BIG = big), "Cannot write"))) {
    out <- config_writer_output(config_writer(script, "gemini", case[[1]], env = case[[2]], wrap = wrap))
    expect_equal(out[[1]], "mcplite_error_config_io")
    msg <- paste(out[-1], collapse = " ")
    expect_match(msg, paste0("^", case[[3]], " "))
    expect_match(msg, "File too large.*[.] Nothing was changed[.]$")
  }
  expect_equal(lapply(c(files, small), readLines), before)
  expect_equal(list.files(dir, all.files = TRUE, no.. = TRUE), c("settings.json", "settings.json.bak", "small.json"))
})

test_that("an updated entry keeps no other transport's keys: Gemini httpUrl, Codex url and bearer token", {
  script <- server_script("mcplite::mcp_server(list())")
  dir <- tempfile("cfg-")
  dir.create(dir)
  gemini <- file.path(dir, "settings.json")
  writeLines(c("{", "  \"mcpServers\": {", "    \"my-tools\": {",
               "      \"httpUrl\": \"https://remote.example/mcp\",",
               "      \"headers\": {\"Authorization\": \"Bearer x\"},",
               "      \"timeout\": 30000", "    }", "  }", "}"), gemini)
  expect_equal(config_writer_output(config_writer(script, "gemini", gemini)), "written")
  entry <- jsonlite::read_json(gemini)$mcpServers[["my-tools"]]
  expect_equal(sort(names(entry)), c("args", "command", "timeout"))
  codex <- file.path(dir, "config.toml")
  writeLines(c("[mcp_servers.my-tools]", "url = \"https://remote.example/mcp\"",
               "bearer_token_env_var = \"TOKEN\"", "startup_timeout_sec = 20", "",
               "[mcp_servers.my-tools.http_headers]", "X-Team = \"r\""), codex)
  expect_equal(config_writer_output(config_writer(script, "codex", codex)), "written")
  lines <- readLines(codex)
  expect_equal(lines[[1]], "[mcp_servers.my-tools]")
  expect_false(any(grepl("url|bearer|http_headers|X-Team", lines)))
  expect_true("startup_timeout_sec = 20" %in% lines)
  expect_match(lines[[2]], "^command = ")
})

test_that("only the entry's text changes in a JSON file: duplicate keys and big integers stay", {
  script <- server_script("mcplite::mcp_server(list())")
  dir <- tempfile("cfg-")
  dir.create(dir)
  path <- file.path(dir, "mcp.json")
  head <- c("{", "  \"theme\": \"light\", \"theme\": \"dark\",",
            "  \"seed\": 123456789012345678901234567890,",
            "  \"mcpServers\": {",
            "    \"a\": {\"command\": \"x\"}, \"a\": {\"command\": \"y\"},")
  tail <- c("    \"z\":   {\"command\": \"z\"}", "  }", "}")
  writeLines(c(head, tail), path)
  expect_equal(config_writer_output(config_writer(script, "cursor", path)), "written")
  new <- readLines(path)
  expect_equal(new[seq_along(head)], head)
  expect_equal(new[[length(head) + 1]], "    \"z\":   {\"command\": \"z\"},")
  expect_equal(new[[length(head) + 2]], "    \"my-tools\":   {")
  expect_equal(utils::tail(new, 2), c("  }", "}"))
  # Updating it again changes only its lines.
  again <- server_script("mcplite::mcp_server(list())", dir = file.path(tempfile(), "my-tools"))
  expect_equal(config_writer_output(config_writer(again, "cursor", path)), "written")
  newer <- readLines(path)
  changed <- which(newer != new)
  expect_length(changed, 1)
  expect_match(newer[changed], normalizePath(again), fixed = TRUE)

  # A server name written twice is refused: clients differ in which one they read.
  writeLines(c("{\"mcpServers\": {\"my-tools\": {}, \"my-tools\": {\"command\": \"x\"}}}"), path)
  before <- readLines(path)
  out <- config_writer_output(config_writer(script, "cursor", path))
  expect_equal(out[[1]], "mcplite_error_config_layout")
  expect_snapshot(cat(gsub(dir, "<dir>", out[-1], fixed = TRUE), sep = "\n"))
  expect_equal(readLines(path), before)
})
