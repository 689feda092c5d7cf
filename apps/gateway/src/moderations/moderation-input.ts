import type { ModerationInput } from '@igw/contracts';

/** The texts of a moderation input (what is counted and billed) and how many images it holds. */
export function moderationTexts(input: ModerationInput): { texts: string[]; images: number } {
  if (typeof input === 'string') return { texts: [input], images: 0 };
  const texts: string[] = [];
  let images = 0;
  for (const item of input) {
    if (typeof item === 'string') texts.push(item);
    else if (item.type === 'text') texts.push(item.text);
    else images += 1;
  }
  return { texts, images };
}
