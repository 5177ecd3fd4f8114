package draw

import "github.com/kgrepl/kgrepl/sim"

// InvoiceNumbersFrom exposes invoiceNumbersFrom to the package's tests.
var InvoiceNumbersFrom = invoiceNumbersFrom

// Keeps exposes SeqOptions.keeps (with its --type set) to the tests.
func (opt SeqOptions) Keeps(p *sim.Packet) bool { return opt.keeps(p, opt.types()) }
