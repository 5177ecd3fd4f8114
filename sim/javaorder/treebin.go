package javaorder

// HashMap.TreeNode: a bucket of more than 8 keys in a table of 64 buckets
// or more is a red-black tree whose linked order (the iteration order)
// changes as keys go in. Each function follows the OpenJDK method it is
// named after.

// treeLinks are TreeNode's fields beyond Node's, kept apart so that list
// nodes (nearly all of them) stay small.
type treeLinks[K comparable] struct {
	parent, left, right, prev *hashNode[K]
	red                       bool
}

// treeifyBin is HashMap.treeifyBin.
func (m *Map[K]) treeifyBin(hash int32) {
	if len(m.table) < 64 { // MIN_TREEIFY_CAPACITY
		m.resize()
		return
	}
	first := m.table[m.index(hash)]
	var prev *hashNode[K]
	for e := first; e != nil; e = e.next {
		e.t = &treeLinks[K]{prev: prev}
		prev = e
	}
	m.treeify(first)
}

// dir orders key k (hash h) against tree node p: -1 left, 1 right.
func (m *Map[K]) dir(h int32, k K, p *hashNode[K]) int {
	switch {
	case p.hash > h:
		return -1
	case p.hash < h:
		return 1
	}
	if m.compare != nil {
		if c := m.compare(k, p.key); c != 0 {
			return c
		}
	}
	m.inexact = true // tieBreakOrder: class names, then identity hash codes
	return -1
}

// treeify is TreeNode.treeify of the bin starting at first.
func (m *Map[K]) treeify(first *hashNode[K]) {
	var root *hashNode[K]
	for x := first; x != nil; {
		next := x.next
		x.t.left, x.t.right = nil, nil
		if root == nil {
			x.t.parent, x.t.red, root = nil, false, x
		} else {
			for p := root; ; {
				d := m.dir(x.hash, x.key, p)
				xp := p
				if d <= 0 {
					p = p.t.left
				} else {
					p = p.t.right
				}
				if p == nil {
					x.t.parent = xp
					if d <= 0 {
						xp.t.left = x
					} else {
						xp.t.right = x
					}
					root = balanceInsertion(root, x)
					break
				}
			}
		}
		x = next
	}
	m.moveRootToFront(root)
}

// putTreeVal is TreeNode.putTreeVal; it reports whether the key was new.
func (m *Map[K]) putTreeVal(first *hashNode[K], h int32, k K) bool {
	root := first
	for root.t.parent != nil {
		root = root.t.parent
	}
	for p := root; ; {
		if p.hash == h && p.key == k {
			return false
		}
		var d int
		if p.hash == h {
			if found := findInTree(p, h, k); found {
				return false
			}
		}
		d = m.dir(h, k, p)
		xp := p
		if d <= 0 {
			p = p.t.left
		} else {
			p = p.t.right
		}
		if p == nil {
			xpn := xp.next
			x := m.node(k, h, xpn)
			x.t = &treeLinks[K]{parent: xp, prev: xp}
			if d <= 0 {
				xp.t.left = x
			} else {
				xp.t.right = x
			}
			xp.next = x
			if xpn != nil {
				xpn.t.prev = x
			}
			m.moveRootToFront(balanceInsertion(root, x))
			return true
		}
	}
}

// findInTree reports whether key k with hash h is in the subtree at p.
func findInTree[K comparable](p *hashNode[K], h int32, k K) bool {
	if p == nil {
		return false
	}
	if p.hash == h && p.key == k {
		return true
	}
	return findInTree(p.t.left, h, k) || findInTree(p.t.right, h, k)
}

// moveRootToFront is TreeNode.moveRootToFront.
func (m *Map[K]) moveRootToFront(root *hashNode[K]) {
	if root == nil {
		return
	}
	i := m.index(root.hash)
	first := m.table[i]
	if root == first {
		return
	}
	m.table[i] = root
	rp, rn := root.t.prev, root.next
	if rn != nil {
		rn.t.prev = rp
	}
	if rp != nil {
		rp.next = rn
	}
	if first != nil {
		first.t.prev = root
	}
	root.next, root.t.prev = first, nil
}

// split is TreeNode.split: the tree bin at old index j goes to j and
// j+bit, each half a list again when it has 6 keys or fewer.
func (m *Map[K]) split(b *hashNode[K], j, bit int) {
	var loHead, loTail, hiHead, hiTail *hashNode[K]
	lc, hc := 0, 0
	for e := b; e != nil; {
		next := e.next
		e.next = nil
		if uint32(e.hash)&uint32(bit) == 0 {
			if e.t.prev = loTail; loTail == nil {
				loHead = e
			} else {
				loTail.next = e
			}
			loTail = e
			lc++
		} else {
			if e.t.prev = hiTail; hiTail == nil {
				hiHead = e
			} else {
				hiTail.next = e
			}
			hiTail = e
			hc++
		}
		e = next
	}
	if loHead != nil {
		m.table[j] = loHead
		if lc <= 6 { // UNTREEIFY_THRESHOLD
			untreeify(loHead)
		} else if hiHead != nil {
			m.treeify(loHead)
		}
	}
	if hiHead != nil {
		m.table[j+bit] = hiHead
		if hc <= 6 {
			untreeify(hiHead)
		} else if loHead != nil {
			m.treeify(hiHead)
		}
	}
}

// untreeify turns a tree bin back into a list, keeping its linked order.
func untreeify[K comparable](first *hashNode[K]) {
	for e := first; e != nil; e = e.next {
		e.t = nil
	}
}

// rotateLeft is TreeNode.rotateLeft.
func rotateLeft[K comparable](root, p *hashNode[K]) *hashNode[K] {
	if p == nil || p.t.right == nil {
		return root
	}
	r := p.t.right
	p.t.right = r.t.left
	if p.t.right != nil {
		p.t.right.t.parent = p
	}
	r.t.parent = p.t.parent
	switch pp := r.t.parent; {
	case pp == nil:
		root = r
		r.t.red = false
	case pp.t.left == p:
		pp.t.left = r
	default:
		pp.t.right = r
	}
	r.t.left, p.t.parent = p, r
	return root
}

// rotateRight is TreeNode.rotateRight.
func rotateRight[K comparable](root, p *hashNode[K]) *hashNode[K] {
	if p == nil || p.t.left == nil {
		return root
	}
	l := p.t.left
	p.t.left = l.t.right
	if p.t.left != nil {
		p.t.left.t.parent = p
	}
	l.t.parent = p.t.parent
	switch pp := l.t.parent; {
	case pp == nil:
		root = l
		l.t.red = false
	case pp.t.right == p:
		pp.t.right = l
	default:
		pp.t.left = l
	}
	l.t.right, p.t.parent = p, l
	return root
}

// balanceInsertion is TreeNode.balanceInsertion.
func balanceInsertion[K comparable](root, x *hashNode[K]) *hashNode[K] {
	x.t.red = true
	for {
		xp := x.t.parent
		if xp == nil {
			x.t.red = false
			return x
		}
		xpp := xp.t.parent
		if !xp.t.red || xpp == nil {
			return root
		}
		if xppl := xpp.t.left; xp == xppl {
			if xppr := xpp.t.right; xppr != nil && xppr.t.red {
				xppr.t.red, xp.t.red, xpp.t.red = false, false, true
				x = xpp
				continue
			}
			if x == xp.t.right {
				x = xp
				root = rotateLeft(root, x)
				if xp = x.t.parent; xp == nil {
					xpp = nil
				} else {
					xpp = xp.t.parent
				}
			}
			if xp != nil {
				xp.t.red = false
				if xpp != nil {
					xpp.t.red = true
					root = rotateRight(root, xpp)
				}
			}
		} else {
			if xppl != nil && xppl.t.red {
				xppl.t.red, xp.t.red, xpp.t.red = false, false, true
				x = xpp
				continue
			}
			if x == xp.t.left {
				x = xp
				root = rotateRight(root, x)
				if xp = x.t.parent; xp == nil {
					xpp = nil
				} else {
					xpp = xp.t.parent
				}
			}
			if xp != nil {
				xp.t.red = false
				if xpp != nil {
					xpp.t.red = true
					root = rotateLeft(root, xpp)
				}
			}
		}
	}
}
