"""Google's price book: Compute Engine VMs as Google bills them, the types with no charge of their own."""
