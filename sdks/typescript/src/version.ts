/** This package's version, as its package.json says (a unit test holds the two together); sent in the User-Agent. */
export const VERSION = '0.3.0';
