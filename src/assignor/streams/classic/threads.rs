//! `assignTasksToThreads` (`SPA.java:1293-1394`, STREAMS.md §7.1).
