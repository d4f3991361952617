export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export const IMAGE_SIZE = /^(\d{1,5})x(\d{1,5})$/;
export const VIDEO_SIZE = /^(\d{2,5})\*(\d{2,5})$/;
