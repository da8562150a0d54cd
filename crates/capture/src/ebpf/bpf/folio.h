/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by the capture and profile programs (after vmlinux_min.h and the libbpf headers). */
#ifndef RA_FOLIO_H
#define RA_FOLIO_H

/* Pages in a folio: 1, or 2^order for a large one (CO-RE: the flag's value and the order's
 * field are the running kernel's). */
static __always_inline __u64 folio_pages(struct folio *folio)
{
	unsigned long flags = 0;

	if (bpf_probe_read_kernel(&flags, sizeof(flags), folio))
		return 1;
	if (!(flags & (1UL << bpf_core_enum_value(enum pageflags, PG_head))))
		return 1;
	if (!bpf_core_field_exists(folio->_flags_1))
		return 1;
	return 1ULL << (BPF_CORE_READ(folio, _flags_1) & 0x3f);
}

#endif
