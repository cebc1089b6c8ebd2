# The boundary between the Rust core and R (src/rust/ARCHITECTURE.md,
# "Calling R safely"), seen from a client over real pipes: reading a tool's
# value leaves it as it was, and what R fails to allocate or evaluate is a
# tool error carrying R's own message, after which the server goes on.

boundary_calls <- function(lines, server, version = "2025-11-25", timeout = 60) {
  out <- mcp_exchange(c(initialize_line(version), initialized_line(), lines),
                      server = server, timeout = timeout)
  by_id <- setNames(out$responses, vapply(out$responses, function(r) format(r$id), ""))
  calls <- by_id[setdiff(names(by_id), "0")]
  mcp_validate(unname(calls), version, "CallToolResult")
  list(by_id = by_id, stderr = out$stderr)
}

boundary_call <- function(id, name, arguments = "{}") {
  rpc(id, "tools/call", sprintf('{"name":"%s","arguments":%s}', name, arguments))
}

test_that("reading a value R keeps in a wrapper object leaves its metadata and data as they were", {
  skip_if_no_mcplite_child()
  # sort() returns R's wrapper objects, which know they are sorted and have
  # no NA (so do any that wrap_meta() makes). A writable data pointer (INTEGER(), REAL(), LOGICAL()) would make
  # R forget both, so sending the value to the client would change it.
  server <- server_script(c(
    "library(mcplite)",
    "set.seed(1)",
    "# sort() wraps doubles and integers; R's own wrap_meta() the others.",
    "kept <- list(d = sort(runif(2000)), i = sort(sample.int(1e6, 2000)),",
    "             l = .Internal(wrap_meta(c(FALSE, TRUE, TRUE), 1L, 1L)),",
    "             s = .Internal(wrap_meta(c('a', 'b', 'c'), 1L, 1L)))",
    "copies <- lapply(kept, function(x) x[seq_along(x)])",
    "meta <- function(x) sub('.*wrapper \\\\[([^]]*)\\\\].*', '\\\\1', capture.output(.Internal(inspect(x)))[[1]])",
    "before <- vapply(kept, meta, '')",
    "get <- tool(function(which) kept[[which]], name = 'get', description = 'A kept vector',",
    "            arguments = list(which = type_string()))",
    "frame <- tool(function() data.frame(d = kept$d[1:5], i = kept$i[1:5]), name = 'frame', description = 'A frame')",
    "state <- tool(function() list(before = unname(before), after = unname(vapply(kept, meta, '')),",
    "  same = unname(mapply(identical, kept, copies))), name = 'state', description = 'Metadata')",
    "mcp_server(list(get, frame, state))"
  ))
  lines <- c(
    boundary_call(1, "get", '{"which":"d"}'), boundary_call(2, "get", '{"which":"i"}'),
    boundary_call(3, "get", '{"which":"l"}'), boundary_call(4, "get", '{"which":"s"}'),
    boundary_call(5, "frame"), boundary_call(6, "state")
  )
  r <- boundary_calls(lines, server)
  for (id in as.character(1:5)) expect_false(isTRUE(r$by_id[[id]]$result$isError), info = id)
  expect_length(jsonlite::fromJSON(r$by_id[["1"]]$result$content[[1]]$text), 2000)
  st <- r$by_id[["6"]]$result$structuredContent
  if (is.null(st)) st <- jsonlite::fromJSON(r$by_id[["6"]]$result$content[[1]]$text)
  before <- unlist(st$before)
  # The wrappers knew they were sorted with no NA when the script made them.
  expect_true(all(grepl("srt=1,no_na=1", before)), info = paste(before, collapse = " | "))
  # Sending them keeps that, where R does: from R 4.6.0 a wrapper forgets its
  # metadata when anything takes a read-only pointer to its data too (its
  # Dataptr method locks the data; R's own identical() then forgets it), and
  # mcplite reads the data through such a pointer. The values stay the same.
  if (getRversion() < "4.6.0") expect_identical(unlist(st$after), before)
  expect_true(all(unlist(st$same)))
})

test_that("arguments R cannot allocate are a tool error with R's message, and later calls are served", {
  skip_if_no_mcplite_child()
  # Under a 100 MB vector memory limit a 120 MB string argument cannot be
  # made, while small calls still can.
  server <- server_script(c(
    "library(mcplite)",
    "invisible(mem.maxVSize(100))",
    "size <- tool(function(text) nchar(text), name = 'size', description = 'Counts',",
    "             arguments = list(text = type_string()))",
    "ok <- tool(function() 'fine', name = 'ok', description = 'Says fine')",
    "mcp_server(list(size, ok))"
  ))
  big <- boundary_call(0, "size", sprintf('{"text":"%s"}', strrep("x", 120e6)))
  lines <- c(
    sub('"id":0', '"id":2', big, fixed = TRUE),
    boundary_call(3, "ok"),
    boundary_call(4, "size", '{"text":"four"}'),
    sub('"id":0', '"id":5', big, fixed = TRUE),
    boundary_call(6, "ok")
  )
  r <- boundary_calls(lines, server, timeout = 120)
  for (id in c("2", "5")) {
    res <- r$by_id[[id]]$result
    expect_true(isTRUE(res$isError), info = id)
    # R's own words, not a guess: R says it could not allocate.
    expect_match(res$content[[1]]$text,
                 "^Tool size received arguments too large for R to hold \\(.*(cannot allocate|vector memory exhausted|vector memory limit).*\\)\\.$",
                 info = id)
  }
  expect_identical(r$by_id[["3"]]$result$content[[1]]$text, "fine")
  expect_identical(r$by_id[["4"]]$result$content[[1]]$text, "4")
  expect_identical(r$by_id[["6"]]$result$content[[1]]$text, "fine")
})

test_that("a lazy vector R cannot make is refused with R's message", {
  skip_if_no_mcplite_child()
  server <- server_script(c(
    "library(mcplite)",
    "invisible(mem.maxVSize(1500))",
    "big <- tool(function() list(x = seq_len(1e9)), name = 'big', description = 'Too long to make')",
    "ok <- tool(function() 'fine', name = 'ok', description = 'Says fine')",
    "mcp_server(list(big, ok))"
  ))
  r <- boundary_calls(c(boundary_call(1, "big"), boundary_call(2, "ok")), server)
  res <- r$by_id[["1"]]$result
  expect_true(isTRUE(res$isError))
  expect_match(res$content[[1]]$text,
               "R could not produce the values of an ALTREP integer vector of length 1000000000: .*(cannot allocate|vector memory exhausted|vector memory limit)")
  expect_identical(r$by_id[["2"]]$result$content[[1]]$text, "fine")
})
