# Another local user, for the tests of what a shared machine must keep
# private (the workers' channels, mcp_config()'s files). The test runs as
# root and drops to `nobody` with setpriv (util-linux) for the attacker's
# processes. Where that is impossible the test skips with a message; with
# MCPLITE_REQUIRE_SECOND_USER=true (set by .ci/run) it fails instead, so CI
# cannot pass these tests by skipping them.
#
# second_user_skip()          skip (or fail) unless a second user is available
# second_user_lib(packages)   a library `nobody` can read, holding copies of
#                             the installed `packages` (and what they import)
# second_user_process(cmd, args, ...)   a processx process running as nobody
# second_user_rscript(code, lib, ...)   Rscript -e `code` as nobody

second_user <- "nobody"

second_user_skip <- function() {
  why <- NULL
  if (.Platform$OS.type != "unix") {
    why <- "second-user tests need a Unix system"
  } else if (!identical(unname(Sys.info()[["effective_user"]]), "root")) {
    why <- "second-user tests run as root (they drop to `nobody`)"
  } else if (!nzchar(Sys.which("setpriv"))) {
    why <- "second-user tests need setpriv (util-linux)"
  } else if (system2("setpriv", c(second_user_setpriv_args(), "--", "true"),
                     stdout = FALSE, stderr = FALSE) != 0) {
    why <- "cannot drop to the user `nobody` with setpriv"
  }
  if (is.null(why)) return(invisible(TRUE))
  if (identical(Sys.getenv("MCPLITE_REQUIRE_SECOND_USER"), "true")) {
    testthat::fail(paste0(why, " (MCPLITE_REQUIRE_SECOND_USER=true: not skipped)"))
  }
  testthat::skip(why)
}

second_user_setpriv_args <- function() {
  ids <- second_user_ids()
  c(sprintf("--reuid=%d", ids[["uid"]]), sprintf("--regid=%d", ids[["gid"]]), "--clear-groups")
}

second_user_ids <- function() {
  uid <- suppressWarnings(as.integer(system2("id", c("-u", second_user), stdout = TRUE, stderr = FALSE)))
  gid <- suppressWarnings(as.integer(system2("id", c("-g", second_user), stdout = TRUE, stderr = FALSE)))
  c(uid = if (length(uid) == 1) uid else 65534L, gid = if (length(gid) == 1) gid else 65534L)
}

# A library `nobody` can read: a world-readable temporary directory holding
# copies of the installed packages (CI's fresh clone keeps its library in a
# 0700 directory `nobody` cannot enter). Made once per test process.
second_user_lib <- function(packages = "mcplite") {
  key <- paste(sort(packages), collapse = ",")
  known <- second_user_state$libs[[key]]
  if (!is.null(known) && dir.exists(known)) return(known)
  lib <- tempfile("mcplite-lib-nobody-", tmpdir = "/tmp")
  dir.create(lib, mode = "0755")
  base <- rownames(utils::installed.packages(priority = "base"))
  need <- unique(packages)
  todo <- need
  while (length(todo)) {
    deps <- unlist(tools::package_dependencies(todo, db = utils::installed.packages(),
                                               which = c("Depends", "Imports", "LinkingTo")))
    todo <- setdiff(deps, c(need, base))
    need <- c(need, todo)
  }
  for (p in need) {
    path <- system.file(package = p)
    if (nzchar(path) && !startsWith(path, R.home())) file.copy(path, lib, recursive = TRUE)
  }
  system2("chmod", c("-R", "a+rX", shQuote(lib)))
  Sys.chmod(lib, "0755")
  second_user_state$libs[[key]] <- lib
  lib
}

second_user_state <- new.env(parent = emptyenv())
second_user_state$libs <- list()

# A directory `nobody` owns, for its HOME and temporary files.
second_user_home <- function() {
  home <- second_user_state$home
  if (!is.null(home) && dir.exists(home)) return(home)
  home <- tempfile("mcplite-home-nobody-", tmpdir = "/tmp")
  dir.create(home, mode = "0700")
  ids <- second_user_ids()
  system2("chown", c(sprintf("%d:%d", ids[["uid"]], ids[["gid"]]), shQuote(home)))
  second_user_state$home <- home
  home
}

# `cmd args...` as nobody, with HOME and TMPDIR in nobody's own directory.
second_user_process <- function(cmd, args = character(), env = NULL, ...) {
  home <- second_user_home()
  processx::process$new(
    "setpriv", c(second_user_setpriv_args(), "--", cmd, args),
    env = c("current", HOME = home, TMPDIR = home, env), ...
  )
}

# Rscript -e code as nobody, waiting for it; returns processx::run()'s list.
second_user_rscript <- function(code, lib = second_user_lib(), env = NULL, timeout = 120) {
  home <- second_user_home()
  processx::run(
    "setpriv", c(second_user_setpriv_args(), "--", mcp_rscript(), "--vanilla", "-e", code),
    env = c("current", HOME = home, TMPDIR = home, R_LIBS = lib, env),
    error_on_status = FALSE, timeout = timeout
  )
}

# The control of a "another user cannot connect" test: a Unix socket any
# user may reach (mode 0777 in a directory of mode 0755), listening with
# nanonext, so an attempt of the other user that connects there shows that
# its connecting works. Returns its ipc:// url; closed and removed when the
# test (the frame `envir`) ends.
second_user_open_socket <- function(envir = parent.frame()) {
  dir <- tempfile("open-", tmpdir = "/tmp")
  dir.create(dir, mode = "0755")
  Sys.chmod(dir, "0755")
  url <- sprintf("ipc://%s/s", dir)
  sock <- nanonext::socket("rep", listen = url)
  Sys.chmod(file.path(dir, "s"), "0777", use_umask = FALSE)
  # rm: R's unlink() leaves sockets (and so their directory) behind.
  cleanup <- substitute({ close(sock); system2("rm", c("-rf", shQuote(dir))) }, list(sock = sock, dir = dir))
  do.call(base::on.exit, list(cleanup, add = TRUE), envir = envir)
  url
}
