# Runs the testthat suite under R CMD check.
library(testthat)
library(mcplite)

test_check("mcplite")
