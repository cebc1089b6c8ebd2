#' Ready-made tools for a live R session
#'
#' @description
#' `session_tools()` returns tools that let an assistant look at (and, if you
#' say so, work in) the R session that serves them: give them to
#' [mcp_session()] to serve your interactive session, or to [mcp_server()].
#'
#' * `list_r_objects`: the objects of the global environment, with class,
#'   dimensions or length, and size.
#' * `describe_r_object`: one object in detail: its `str()`, a data frame's
#'   columns with their types and missing values, and the printed `summary()`
#'   of an object that has its own summary method (a fitted model, a factor,
#'   a data frame).
#' * `read_r_help`: a help page as plain text: from the packages loaded in
#'   the session, or from any installed package named with `package`.
#' * `run_r_code`, only with `eval = TRUE`: evaluates R code in the global
#'   environment and returns what the console would show.
#'
#' The first three only read. `run_r_code` runs any code the model writes,
#' with all the rights of your session: it can change or delete your objects
#' and files. That is your decision to make, so it is not served unless you
#' ask for it with `eval = TRUE`.
#'
#' @details
#' ## What `run_r_code` returns
#' The code (UTF-8, as every MCP text) is parsed as a whole, then its
#' expressions are evaluated one after the other in the global environment,
#' as if typed at the console: visible values are printed (autoprint), messages and warnings appear where they happen
#' (warnings at once, as with `options(warn = 1)`), and the first error stops
#' the evaluation (as `source()` does) and makes the result a tool error,
#' with the output before it. Output written to standard error directly
#' (`cat(file = stderr())`) is not captured. A syntax error runs nothing.
#'
#' Plots are drawn on a private off-screen PNG device ([ragg::agg_png()] if
#' ragg is installed, else [grDevices::png()]), one image per plot page, and
#' come back as image blocks after the text; the device that was current
#' stays current. The plots do **not** appear in your IDE's plot pane or
#' graphics window.
#'
#' ## Bounds
#' Every output is bounded before it becomes JSON, and a note says when
#' something was cut: the text of one result holds at most
#' `r SESSION_MAX_TEXT_CHARS` characters, `run_r_code` returns at most
#' `r SESSION_MAX_PLOTS` plots of at most `r SESSION_MAX_IMAGE_BYTES` bytes
#' each (`r SESSION_PLOT_WIDTH` x `r SESSION_PLOT_HEIGHT` pixels),
#' `list_r_objects` lists at most `r SESSION_MAX_OBJECTS` objects, and
#' measures an object's size only when it has at most
#' `r SESSION_SIZE_MAX_ELEMENTS` list elements and strings (counted one
#' level down: a data frame's character columns count, its number columns
#' do not), since measuring those takes long.
#'
#' @param eval `TRUE` to include `run_r_code`, which evaluates any R code the
#'   model sends; `FALSE` (the default) for the tools that only read.
#' @return A list of [tool()] objects.
#' @seealso [mcp_session()] to serve them from your console.
#' @export
#' @examples
#' tools <- session_tools()
#' names(tools)
#'
#' # Tools are functions: try them in R.
#' cat(tools$describe_r_object("cars")$content[[1]]$text)
#' cat(substr(tools$read_r_help("nchar", package = "base")$content[[1]]$text, 1, 300))
#'
#' run <- session_tools(eval = TRUE)$run_r_code
#' res <- run("x <- c(1, 5, 2)\nsummary(x)\nmessage('done')")
#' cat(res$content[[1]]$text)
#'
#' \dontrun{
#' # In your interactive session (see the guide "Work in your live R session"):
#' mcp_session(session_tools(eval = TRUE))
#' }
session_tools <- function(eval = FALSE) {
  check_flag(eval, "eval", call = sys.call())
  tools <- list(
    list_r_objects = tool(
      session_list_objects,
      "List the objects in the global environment of the user's R session, with their class, dimensions or length, and size.",
      name = "list_r_objects",
      annotations = list(read_only_hint = TRUE, open_world_hint = FALSE)
    ),
    describe_r_object = tool(
      session_describe_object,
      "Describe one R object of the user's session in detail: its structure (str), a data frame's columns and their types, a model's summary.",
      name = "describe_r_object",
      arguments = list(name = type_string("The object's name, as the R console knows it (global environment first, then attached packages).")),
      annotations = list(read_only_hint = TRUE, open_world_hint = FALSE)
    ),
    read_r_help = tool(
      session_read_help,
      "Read an R help page as plain text, from the packages loaded in the user's R session or from a named installed package.",
      name = "read_r_help",
      arguments = list(
        topic = type_string("The help topic: a function, data set or other documented name."),
        package = type_string("The package to look in (any installed package); omit to search the packages loaded in the session.", required = FALSE)
      ),
      annotations = list(read_only_hint = TRUE, open_world_hint = FALSE)
    )
  )
  if (eval) {
    tools$run_r_code <- tool(
      session_run_code,
      paste(
        "Run R code in the user's live R session (global environment) and return what the console would show:",
        "printed values, messages, warnings, the error, and plots as PNG images.",
        "Objects it creates or changes stay in the user's session."
      ),
      name = "run_r_code",
      arguments = list(code = type_string("R code; several lines and expressions allowed.")),
      annotations = list(read_only_hint = FALSE, destructive_hint = TRUE, open_world_hint = TRUE)
    )
  }
  tools
}

# Bounds of every output of the session tools (see ?session_tools).
SESSION_MAX_TEXT_CHARS <- 20000L
SESSION_MAX_PLOTS <- 4L
SESSION_MAX_IMAGE_BYTES <- 1000000L
SESSION_PLOT_WIDTH <- 720L
SESSION_PLOT_HEIGHT <- 540L
SESSION_PLOT_RES <- 96L
SESSION_MAX_OBJECTS <- 100L
SESSION_SIZE_MAX_ELEMENTS <- 100000L

# Text as valid UTF-8, whatever encoding R holds it in; bytes that are not
# valid in their encoding are shown as <xx>.
utf8_text <- function(x) {
  x <- paste(as.character(x), collapse = "\n")
  if (Encoding(x) == "unknown" && !l10n_info()[["UTF-8"]]) {
    x <- iconv(x, from = "", to = "UTF-8", sub = "byte")
  } else {
    x <- enc2utf8(x)
  }
  if (!validUTF8(x)) x <- iconv(x, from = "UTF-8", to = "UTF-8", sub = "byte")
  x
}

# At most `max` characters of `text`, with a note when cut. `total`: how
# many characters there were, when `text` is already a part of them.
bounded_text <- function(text, max = SESSION_MAX_TEXT_CHARS, total = NULL) {
  text <- utf8_text(text)
  n <- nchar(text, type = "chars")
  if (is.null(total)) total <- n
  if (total <= max && n <= max) return(text)
  paste0(
    substr(text, 1L, max),
    sprintf("\n[... output cut: %d of %d characters shown (session tools return at most %d).]",
            min(n, max), as.integer(total), max)
  )
}

# What R prints for `expr`, as UTF-8 text.
printed <- function(expr) {
  out <- utils::capture.output(expr)
  utf8_text(out)
}

# A data frame of text as aligned columns under a header line.
text_table <- function(df) {
  cols <- Map(function(header, values) format(c(header, as.character(values))), names(df), df)
  paste(sub(" +$", "", do.call(paste, c(unname(cols), sep = "  "))), collapse = "\n")
}

session_text_result <- function(text, is_error = FALSE) {
  tool_result(content_text(bounded_text(text)), is_error = is_error)
}

# ---- list_r_objects --------------------------------------------------------

session_list_objects <- function() {
  env <- globalenv()
  names <- sort(ls(env))
  total <- length(names)
  if (total == 0) return(session_text_result("The global environment is empty."))
  shown <- names[seq_len(min(total, SESSION_MAX_OBJECTS))]
  rows <- lapply(shown, function(nm) object_row(nm, env))
  table <- do.call(rbind, lapply(rows, as.data.frame, stringsAsFactors = FALSE))
  text <- text_table(table)
  if (total > length(shown)) {
    text <- paste0(text, sprintf(
      "\n[%d of %d objects listed (session tools list at most %d); ask for one by name with describe_r_object.]",
      length(shown), total, SESSION_MAX_OBJECTS
    ))
  }
  session_text_result(text)
}

# One line of the listing. Active bindings are not run (that would run
# the user's code), and a huge recursive object's size is not computed.
object_row <- function(name, env) {
  if (bindingIsActive(name, env)) {
    return(list(name = name, class = "(active binding)", dims = "", size = ""))
  }
  x <- get(name, envir = env, inherits = FALSE)
  list(name = name, class = paste(class(x), collapse = ", "), dims = object_dims(x), size = object_size(x))
}

object_dims <- function(x) {
  d <- dim(x)
  if (!is.null(d)) return(paste(d, collapse = " x "))
  if (is.environment(x) || is.function(x)) return("")
  format(length(x))
}

# object.size() walks every element of a list and every string of a
# character vector (a number vector costs nothing): past the bound of such
# elements (counted one level down), the size is not computed.
object_size <- function(x) {
  if (sizing_cost(x) > SESSION_SIZE_MAX_ELEMENTS) {
    return(sprintf("(not computed: over %d elements)", SESSION_SIZE_MAX_ELEMENTS))
  }
  format(utils::object.size(x), units = "auto", standard = "SI")
}

sizing_cost <- function(x) {
  walked <- function(el) if (is.list(el) || is.character(el)) length(el) else 0
  if (is.character(x)) return(length(x))
  if (!is.list(x)) return(0)
  length(x) + sum(vapply(x, walked, numeric(1)))
}

# ---- describe_r_object -----------------------------------------------------

session_describe_object <- function(name) {
  if (!is_string(name) || !nzchar(name)) {
    return(session_text_result("`name` must be the name of an R object.", is_error = TRUE))
  }
  found <- exists(name, envir = globalenv())
  if (!found) {
    return(session_text_result(sprintf(
      "There is no object called `%s` in the session (global environment or attached packages). list_r_objects lists the global environment.",
      name
    ), is_error = TRUE))
  }
  x <- get(name, envir = globalenv())
  parts <- c(
    sprintf("`%s`: class %s, type %s, %s %s, size %s.",
            name, paste(class(x), collapse = ", "), typeof(x),
            if (is.null(dim(x))) "length" else "dimensions",
            if (is.null(dim(x))) length(x) else paste(dim(x), collapse = " x "),
            object_size(x))
  )
  if (is.data.frame(x)) {
    cols <- data.frame(
      column = names(x),
      type = vapply(x, function(col) paste(class(col), collapse = ", "), ""),
      missing = vapply(x, function(col) sum(is.na(col)), 0),
      stringsAsFactors = FALSE
    )
    parts <- c(parts, "", "Columns:", text_table(cols))
  }
  parts <- c(parts, "", "Structure (str):", printed(utils::str(x, list.len = 50, give.attr = FALSE)))
  if (has_own_summary(x)) {
    parts <- c(parts, "", "summary():", printed(print(summary(x))))
  }
  session_text_result(paste(parts, collapse = "\n"))
}

# Does the object's class have its own summary() method (a model's, a data
# frame's, a factor's), other than the default one?
has_own_summary <- function(x) {
  cls <- class(x)
  if (!is.object(x)) return(FALSE)
  any(vapply(cls, function(k) !is.null(utils::getS3method("summary", k, optional = TRUE)), logical(1)))
}

# ---- read_r_help -----------------------------------------------------------

session_read_help <- function(topic, package = NULL) {
  if (!is_string(topic) || !nzchar(topic)) {
    return(session_text_result("`topic` must be a help topic, such as \"lm\".", is_error = TRUE))
  }
  if (!is.null(package) && (!is_string(package) || !nzchar(package))) {
    return(session_text_result("`package` must be the name of an installed package, or omitted.", is_error = TRUE))
  }
  if (!is.null(package) && !nzchar(system.file(package = package))) {
    return(session_text_result(sprintf("There is no installed package called \"%s\".", package), is_error = TRUE))
  }
  files <- as.character(utils::help((topic), package = (package), help_type = "text"))
  if (length(files) == 0) {
    where <- if (is.null(package)) "the packages loaded in the session" else sprintf("package %s", package)
    return(session_text_result(sprintf(
      "No help topic \"%s\" in %s. Check the spelling, or name the package that documents it.", topic, where
    ), is_error = TRUE))
  }
  rd <- help_file_rd(files[[1]])
  text <- printed(tools::Rd2txt(rd, out = "", options = list(underline_titles = FALSE, width = 80L)))
  if (length(files) > 1) {
    others <- basename(dirname(dirname(files[-1])))
    text <- paste0(text, sprintf(
      "\n[Also documented in: %s. Give `package` to read one of those.]",
      paste(others, collapse = ", ")
    ))
  }
  session_text_result(text)
}

# The parsed Rd of an installed help page, from the path utils::help()
# gives (<lib>/<pkg>/help/<topic file>): the page is stored in the
# package's help database, <lib>/<pkg>/help/<pkg>.rdb, read here with
# base R's lazyLoad() (what help() itself does, through utils internals).
help_file_rd <- function(file) {
  help_dir <- dirname(file)
  db <- file.path(help_dir, basename(dirname(help_dir)))
  key <- basename(file)
  env <- new.env(parent = emptyenv())
  lazyLoad(db, envir = env, filter = function(names) names == key)
  get(key, envir = env, inherits = FALSE)
}

# ---- run_r_code ------------------------------------------------------------

session_run_code <- function(code) {
  if (!is_string(code)) {
    return(session_text_result("`code` must be R code as one string.", is_error = TRUE))
  }
  exprs <- tryCatch(parse(text = code, keep.source = FALSE, encoding = "UTF-8"), error = function(e) e)
  if (inherits(exprs, "error")) {
    return(session_text_result(paste0("Syntax error, nothing was run:\n", conditionMessage(exprs)), is_error = TRUE))
  }
  run <- run_exprs(exprs)
  text <- run$text
  if (!nzchar(text) && length(run$plots) == 0) {
    text <- if (run$failed) "The code failed." else "The code ran and printed nothing."
  }
  blocks <- list(content_text(bounded_text(text, total = max(run$total, nchar(text)))))
  for (p in run$plots) blocks[[length(blocks) + 1L]] <- p
  if (nzchar(run$plot_note)) blocks[[length(blocks) + 1L]] <- content_text(run$plot_note)
  tool_result(blocks, is_error = run$failed)
}

# Evaluate `exprs` in the global environment as the console would, keeping
# output, messages, warnings and the error in order, and the plots.
run_exprs <- function(exprs) {
  out_file <- tempfile("mcplite-session-out-")
  plot_dir <- tempfile("mcplite-session-plots-")
  dir.create(plot_dir)
  on.exit(unlink(c(out_file, plot_dir), recursive = TRUE), add = TRUE)

  transcript <- new_transcript(out_file)
  on.exit(transcript$close(), add = TRUE, after = FALSE)
  device <- open_plot_device(plot_dir)
  on.exit(close_device(device$number, device$before), add = TRUE, after = FALSE)

  failed <- FALSE
  for (expr in exprs) {
    ok <- withCallingHandlers(
      tryCatch({
        res <- withVisible(eval(expr, envir = globalenv()))
        if (res$visible) {
          print(res$value)
        }
        TRUE
      }, error = function(e) {
        transcript$add(error_text(e))
        FALSE
      }),
      warning = function(w) {
        transcript$add(condition_line("Warning", w))
        invokeRestart("muffleWarning")
      },
      message = function(m) {
        transcript$add(sub("\n$", "", conditionMessage(m)))
        invokeRestart("muffleMessage")
      }
    )
    if (!ok) {
      failed <- TRUE
      break
    }
  }
  text <- transcript$finish()
  plots <- collect_plots(device, plot_dir)
  list(text = text$text, total = text$total, plots = plots$blocks, plot_note = plots$note, failed = failed)
}

error_text <- function(e) condition_line("Error", e)

# "Error in f(x) : message", as the console writes it ("Error: message"
# for code run at top level, which run_exprs() runs through eval()).
condition_line <- function(kind, cnd) {
  msg <- sub("\n$", "", conditionMessage(cnd))
  call <- conditionCall(cnd)
  if (identical(call, quote(eval(expr, envir = globalenv())))) call <- NULL
  if (is.null(call)) return(sprintf("%s: %s", kind, msg))
  sprintf("%s in %s : %s", kind, paste(deparse(call, nlines = 1L), collapse = ""), msg)
}

# The console's text in order: printed output (captured by a sink into a
# file) and condition lines, interleaved. Past the text bound, output is
# counted (`total`, in characters, or bytes where it was not read) but not
# kept.
new_transcript <- function(path) {
  con <- file(path, open = "w+b")
  reader <- file(path, open = "rb")
  depth <- sink.number()
  sink(con)
  chunks <- character()
  kept <- 0L
  total <- 0
  keep <- function(text) {
    if (!nzchar(text)) return()
    total <<- total + nchar(text, type = "chars")
    if (kept > SESSION_MAX_TEXT_CHARS) return()
    chunks[[length(chunks) + 1L]] <<- text
    kept <<- kept + nchar(text, type = "chars")
  }
  pull <- function() {
    flush(con)
    bytes <- readBin(reader, "raw", n = SESSION_MAX_TEXT_CHARS * 4L)
    # What is over the bound is skipped, not read.
    while (length(more <- readBin(reader, "raw", n = 1e6)) > 0) total <<- total + length(more)
    bytes[bytes == as.raw(0)] <- charToRaw("?")
    if (length(bytes)) keep(utf8_text(rawToChar(bytes)))
  }
  closed <- FALSE
  list(
    # A condition's line starts a line of its own, as in the console.
    add = function(line) {
      pull()
      last <- if (length(chunks)) chunks[[length(chunks)]] else "\n"
      if (!endsWith(last, "\n")) line <- paste0("\n", line)
      keep(paste0(line, "\n"))
    },
    finish = function() {
      pull()
      text <- sub("\n$", "", paste(chunks, collapse = ""))
      list(text = text, total = total)
    },
    close = function() {
      if (closed) return()
      closed <<- TRUE
      while (sink.number() > depth) sink()
      close(con)
      close(reader)
    }
  )
}

open_plot_device <- function(dir) {
  before <- grDevices::dev.cur()
  file <- file.path(dir, "plot-%03d.png")
  if (requireNamespace("ragg", quietly = TRUE)) {
    ragg::agg_png(file, width = SESSION_PLOT_WIDTH, height = SESSION_PLOT_HEIGHT,
                  res = SESSION_PLOT_RES, units = "px")
  } else {
    grDevices::png(file, width = SESSION_PLOT_WIDTH, height = SESSION_PLOT_HEIGHT,
                   res = SESSION_PLOT_RES, units = "px")
  }
  number <- grDevices::dev.cur()
  # The display list tells a page that was drawn on from the blank page
  # some devices write when nothing was drawn at all.
  grDevices::dev.control(displaylist = "enable")
  list(number = number, before = before)
}

# The plot pages as image blocks (closing the device), bounded.
collect_plots <- function(device, dir) {
  blank <- FALSE
  if (grDevices::dev.cur() == device$number) {
    recorded <- tryCatch(grDevices::recordPlot(), error = function(e) NULL)
    blank <- !is.null(recorded) && length(recorded[[1]]) == 0
  }
  close_device(device$number, device$before)
  files <- sort(list.files(dir, pattern = "^plot-[0-9]+\\.png$", full.names = TRUE))
  if (blank && length(files) == 1) files <- character()
  notes <- character()
  if (length(files) > SESSION_MAX_PLOTS) {
    notes <- c(notes, sprintf("[%d plots were drawn; the first %d are shown (session tools return at most %d).]",
                              length(files), SESSION_MAX_PLOTS, SESSION_MAX_PLOTS))
    files <- files[seq_len(SESSION_MAX_PLOTS)]
  }
  blocks <- list()
  for (i in seq_along(files)) {
    size <- file.size(files[[i]])
    if (is.na(size) || size == 0) next
    if (size > SESSION_MAX_IMAGE_BYTES) {
      notes <- c(notes, sprintf("[Plot %d was not returned: its PNG has %d bytes (session tools return at most %d).]",
                                i, as.integer(size), SESSION_MAX_IMAGE_BYTES))
      next
    }
    bytes <- readBin(files[[i]], "raw", size)
    blocks[[length(blocks) + 1L]] <- content_image(rust_base64(bytes)$value, "image/png")
  }
  list(blocks = blocks, note = paste(notes, collapse = "\n"))
}
