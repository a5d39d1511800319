use super::super::test_support::{group, named};
use super::*;
