import { moderationTexts } from './moderation-input';

describe('what a moderation input bills', () => {
  it('counts the texts of a string, strings or parts, and the images apart', () => {
    expect(moderationTexts('one')).toEqual({ texts: ['one'], images: 0 });
    expect(moderationTexts(['a', 'b'])).toEqual({ texts: ['a', 'b'], images: 0 });
    expect(moderationTexts([{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: 'https://example.com/a.png' } }])).toEqual({ texts: ['look'], images: 1 });
  });
});
