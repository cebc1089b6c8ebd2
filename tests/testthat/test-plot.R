png_signature <- as.raw(c(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a))

decoded <- function(block) jsonlite::base64_dec(block$data)

# Width and height from the PNG header (IHDR chunk).
png_size <- function(bytes) {
  be32 <- function(b) sum(as.integer(b) * 256^(3:0))
  c(be32(bytes[17:20]), be32(bytes[21:24]))
}

test_that("plot_image() renders base graphics in every accepted form", {
  x <- c(3, 1, 4, 1, 5, 9, 2, 6)
  blocks <- list(
    expression = plot_image(plot(x), width = 400, height = 300),
    braces = plot_image({
      plot(x)
      abline(h = mean(x))
    }, width = 400, height = 300),
    fun = plot_image(function() barplot(x), width = 400, height = 300),
    recorded = local({
      pdf(NULL)
      dev.control("enable")
      hist(x)
      rec <- recordPlot()
      dev.off()
      plot_image(rec, width = 400, height = 300)
    })
  )
  for (b in blocks) {
    expect_s3_class(b, "mcplite_content_image")
    expect_equal(b$mime_type, "image/png")
    bytes <- decoded(b)
    expect_equal(bytes[1:8], png_signature)
    expect_equal(png_size(bytes), c(400, 300))
  }
  # Different plots give different images.
  expect_false(identical(blocks$expression$data, blocks$fun$data))
})

test_that("the base png() device works as well as ragg", {
  x <- 1:10
  bytes <- render_png(plot(x), 300, 200, 72, ragg = FALSE)
  expect_equal(bytes[1:8], png_signature)
  expect_equal(png_size(bytes), c(300, 200))
  skip_if_not_installed("ragg")
  bytes <- render_png(plot(x), 300, 200, 72, ragg = TRUE)
  expect_equal(bytes[1:8], png_signature)
})

test_that("plot_image() renders ggplot2 plots", {
  skip_if_not_installed("ggplot2")
  p <- ggplot2::ggplot(data.frame(x = 1:5, y = c(2, 4, 3, 5, 1)), ggplot2::aes(x, y)) +
    ggplot2::geom_line()
  b <- plot_image(p, width = 400, height = 300, res = 96)
  bytes <- decoded(b)
  expect_equal(bytes[1:8], png_signature)
  expect_equal(png_size(bytes), c(400, 300))
})

test_that("the device is closed and the previous one restored, also on errors", {
  before <- dev.list()
  pdf(NULL)
  mine <- dev.cur()
  on.exit(dev.off(mine), add = TRUE)
  plot_image(plot(1:3), width = 300, height = 300)
  expect_equal(dev.cur(), mine)
  expect_error(plot_image({
    plot(1:3)
    stop("drawing failed")
  }), "drawing failed")
  expect_equal(dev.cur(), mine)
  expect_equal(dev.list(), c(before, mine))
  expect_length(list.files(tempdir(), "^mcplite-plot-"), 0)
})

test_that("base64 is encoded in the core, byte for byte", {
  for (n in c(0, 1, 2, 3, 100, 1001)) {
    bytes <- as.raw(sample(0:255, n, replace = TRUE))
    b64 <- rust_base64(bytes)$value
    # jsonlite wraps its output in lines; the data of a content block has none.
    expect_equal(b64, gsub("\n", "", jsonlite::base64_enc(bytes), fixed = TRUE))
    expect_equal(jsonlite::base64_dec(b64), bytes)
  }
})

test_that("a tool can return a plot", {
  skip_on_cran()
  skip_if_no_mcplite_child()
  script <- server_script(c(
    'hist_tool <- mcplite::tool(function(n) mcplite::tool_result(list(',
    '  mcplite::content_text("A histogram."),',
    '  mcplite::plot_image(hist(seq_len(n)), width = 300, height = 240, res = 72))),',
    '  name = "histogram", description = "Draw a histogram.",',
    '  arguments = list(n = mcplite::type_integer("How many values.")))',
    "mcplite::mcp_server(hist_tool)"
  ))
  for (v in c("2024-11-05", "2026-07-28")) {
    client <- checked_client(script, env = child_env(), protocol = v)
    res <- client$call("histogram", list(n = 20))
    validate_last(client, "CallToolResult")
    expect_equal(res$content[[2]]$type, "image")
    expect_equal(res$content[[2]]$mimeType, "image/png")
    bytes <- jsonlite::base64_dec(res$content[[2]]$data)
    expect_equal(bytes[1:8], png_signature)
  }
})

test_that("plot_image() checks its arguments", {
  expect_snapshot(error = TRUE, plot_image(plot(1:10), width = 100, height = 80, res = 300))
  expect_error(plot_image(plot(1:10), width = 100, height = 80, res = 300), class = "mcplite_error_content")
  expect_snapshot(error = TRUE, {
    plot_image(plot(1), width = 0)
    plot_image(plot(1), height = "big")
    plot_image(plot(1), res = NA)
  })
})
