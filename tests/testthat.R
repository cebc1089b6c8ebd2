library(testthat)
library(mcplite)

test_check("mcplite")
