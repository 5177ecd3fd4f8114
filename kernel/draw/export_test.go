package draw

// InvoiceNumbersFrom exposes invoiceNumbersFrom to the package's tests.
var InvoiceNumbersFrom = invoiceNumbersFrom
