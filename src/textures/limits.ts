// The limits of hosted skins and capes, each with its reason.

/** Largest texture upload (as received): a 64×64 skin is a few KiB, an HD one a few hundred. */
export const MAX_TEXTURE_BYTES = 1024 * 1024;

/** Largest HD texture, as a multiple of the game's sizes: 16 makes a 1024×1024 skin. */
export const MAX_HD_SCALE = 16;

/**
 * Most bytes a texture's image data may inflate to while it is checked: the largest HD texture
 * (1024×1024, 16-bit RGBA) implies under 8.4 MB, interlaced or not; a header claiming more is
 * refused before anything is inflated.
 */
export const MAX_IMAGE_DATA_BYTES = 16 * 1024 * 1024;
