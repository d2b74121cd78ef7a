// The benchmark's players, computed from their number: the seeded database, the floor's map and
// the load generator's bodies name the same players without a list passed between them.
export const nameOf = (i: number): string => `player${i}`;
export const uuidOf = (i: number): string => `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
export const tokenOf = (i: number): string => `10000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
