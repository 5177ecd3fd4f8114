// Package topo is a world's shape: its topics (Topology) and, once a world
// is made, its partitions numbered (Layout): the input partitions in sorted
// order, then the output topic's. Every node finds a partition by that
// number (a log, a position, a committed offset, a record reference in the
// trace) and spells an input record's name (o2.3, t1-0.3) from it. A
// world's shape never changes: one Layout is made when the world is, and
// shared, read-only, by the world, every node and every clone.
package topo
